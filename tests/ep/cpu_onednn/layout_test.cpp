// Concat, Reshape, Flatten and Transpose inside cpu_onednn partitions (next
// to compute, where blocked layouts meet plain ones) vs the reference EP.
#include "ep_compare.h"

namespace loom::ep_testing {
namespace {

TEST(OnednnConcat, AxesAndMixedProducers) {
  for (int64_t axis : {0, 1, -1}) {
    testing::ModelBuilder m;
    m.input("a", kFloat, {2, 3, 4});
    m.input("b", kFloat, {2, 3, 4});
    testing::add_int_attr(m.node("Concat", {"a", "b", "a"}, {"y"}), "axis", axis);
    m.output("y", kFloat, {});
    expect_matches_reference(m.bytes(), {{"a", random_tensor({2, 3, 4}, 1)}, {"b", random_tensor({2, 3, 4}, 2)}}, {},
                             "axis " + std::to_string(axis));
  }
  // Two conv branches (blocked outputs) joined on channels, then a conv.
  testing::ModelBuilder m;
  m.input("x", kFloat, {1, 8, 6, 6});
  random_weights(m, "w1", {16, 8, 1, 1}, 1, 8);
  random_weights(m, "w2", {8, 8, 3, 3}, 2, 72);
  random_weights(m, "w3", {4, 24, 1, 1}, 3, 24);
  m.node("Conv", {"x", "w1"}, {"c1"});
  add_ints_attr(m.node("Conv", {"x", "w2"}, {"c2"}), "pads", {1, 1, 1, 1});
  testing::add_int_attr(m.node("Concat", {"c1", "c2"}, {"cat"}), "axis", 1);
  m.node("Conv", {"cat", "w3"}, {"y"});
  m.output("y", kFloat, {});
  expect_matches_reference(m.bytes(), {{"x", random_tensor({1, 8, 6, 6}, 3)}}, {}, "inception-style");
}

TEST(OnednnLayout, ConvFlattenGemmHead) {
  testing::ModelBuilder m;
  m.input("x", kFloat, {2, 4, 6, 6});
  random_weights(m, "w", {8, 4, 3, 3}, 1, 36);
  random_weights(m, "fc", {10, 8}, 2, 8);
  random_weights(m, "fb", {10}, 3);
  m.node("Conv", {"x", "w"}, {"c"});
  m.node("GlobalAveragePool", {"c"}, {"p"});
  m.node("Flatten", {"p"}, {"f"});
  testing::add_int_attr(m.node("Gemm", {"f", "fc", "fb"}, {"y"}), "transB", 1);
  m.output("y", kFloat, {});
  expect_matches_reference(m.bytes(), {{"x", random_tensor({2, 4, 6, 6}, 4)}});
}

TEST(OnednnLayout, ReshapeAndTransposeBetweenComputeOps) {
  // Conv -> Reshape (-1 and 0 dims) -> Transpose -> MatMul -> Softmax.
  testing::ModelBuilder m(13);
  m.input("x", kFloat, {2, 4, 3, 5});
  random_weights(m, "w", {6, 4, 1, 1}, 1, 4);
  int64_initializer(m, "shape", {0, 6, -1});
  random_weights(m, "k", {6, 7}, 2, 6);
  m.node("Conv", {"x", "w"}, {"c"});
  m.node("Reshape", {"c", "shape"}, {"r"});
  add_ints_attr(m.node("Transpose", {"r"}, {"t"}), "perm", {0, 2, 1});
  m.node("MatMul", {"t", "k"}, {"mm"});
  m.node("Softmax", {"mm"}, {"y"});
  m.output("y", kFloat, {});
  expect_matches_reference(m.bytes(), {{"x", random_tensor({2, 4, 3, 5}, 5)}});
}

TEST(OnednnLayout, TransposeDefaultPermAndReshapeOutput) {
  testing::ModelBuilder m;
  m.input("x", kFloat, {2, 3, 4});
  int64_initializer(m, "shape", {4, 6});
  m.node("Relu", {"x"}, {"r"});
  m.node("Transpose", {"r"}, {"t"});
  m.node("Reshape", {"t", "shape"}, {"y"});
  m.output("y", kFloat, {});
  m.output("t", kFloat, {});
  expect_matches_reference(m.bytes(), {{"x", random_tensor({2, 3, 4}, 6)}});
}

}  // namespace
}  // namespace loom::ep_testing
