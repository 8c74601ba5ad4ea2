// transpose_reshape_simplification (basic): Transpose pairs compose (or
// vanish), identity Transposes go, Reshape pairs keep only the outer shape
// when it does not depend on the intermediate, Squeeze/Unsqueeze round trips
// vanish; near misses stay.
#include <gtest/gtest.h>

#include "common/model_builder.h"
#include "unit/transform/fusion_checks.h"

namespace loom {
namespace {

constexpr auto kFloat = ::onnx::TensorProto::FLOAT;
constexpr auto kBasic = OptimizationLevel::kBasic;
using testing::wave;

std::map<std::string, Tensor> x_input(Dims dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return {{"x", testing::float_tensor(dims, wave(static_cast<size_t>(n), 2.f))}};
}

// x [2,3,4,5] -> Transpose(p1) -> Transpose(p2) -> Neg -> y (empty perm: default)
std::string transposes(const std::vector<int64_t>& p1, const std::vector<int64_t>& p2, bool leak = false) {
  testing::ModelBuilder m(17);
  m.input("x", kFloat, {2, 3, 4, 5});
  auto& t1 = m.node("Transpose", {"x"}, {"t"});
  if (!p1.empty()) testing::add_ints_attr(t1, "perm", p1);
  auto& t2 = m.node("Transpose", {"t"}, {"u"});
  if (!p2.empty()) testing::add_ints_attr(t2, "perm", p2);
  m.node("Neg", {"u"}, {"y"});
  m.output("y", kFloat, {});
  if (leak) m.output("t", kFloat, {});
  return m.bytes();
}

TEST(TransposeReshapeSimplificationTest, Listed) {
  testing::expect_listed_pass("transpose_reshape_simplification", kBasic);
}

TEST(TransposeReshapeSimplificationTest, TransposePairs) {
  const auto x = x_input({2, 3, 4, 5});
  testing::expect_fuses(transposes({0, 2, 1, 3}, {0, 2, 1, 3}), x, {{"Neg", 1}}, "swap twice", kBasic, 0);
  testing::expect_fuses(transposes({0, 2, 3, 1}, {0, 3, 1, 2}), x, {{"Neg", 1}}, "NCHW->NHWC->NCHW", kBasic, 0);
  testing::expect_fuses(transposes({}, {}), x, {{"Neg", 1}}, "default perms", kBasic, 0);
  testing::expect_fuses(transposes({0, 2, 3, 1}, {0, 2, 1, 3}), x, {{"Transpose", 1}, {"Neg", 1}}, "composed", kBasic, 0);
  testing::expect_fuses(transposes({1, 0, 2, 3}, {}), x, {{"Transpose", 1}, {"Neg", 1}}, "composed with default",
                        kBasic, 0);
  testing::expect_fuses(transposes({0, 1, 2, 3}, {3, 2, 0, 1}), x, {{"Transpose", 1}, {"Neg", 1}}, "identity inner",
                        kBasic, 0);
}

TEST(TransposeReshapeSimplificationTest, TransposeNearMiss) {
  // The intermediate is also an output: a pair that does not cancel stays.
  testing::expect_no_fusion(transposes({0, 2, 1, 3}, {0, 1, 3, 2}, true), x_input({2, 3, 4, 5}), "Transpose",
                            "intermediate also an output", kBasic);
  auto s = testing::session(transposes({0, 2, 1, 3}, {0, 1, 3, 2}, true), kBasic);
  ASSERT_TRUE(s);
  EXPECT_EQ(testing::op_counts(*s)["Transpose"], 2);
}

TEST(TransposeReshapeSimplificationTest, CancellingPairWithASharedIntermediate) {
  // NHWC -> NCHW read by the output and by a Transpose back to NHWC: the
  // second reads x directly, the first stays for its other reader.
  const auto x = x_input({2, 3, 4, 5});
  testing::expect_fuses(transposes({0, 3, 1, 2}, {0, 2, 3, 1}, true), x, {{"Transpose", 1}, {"Neg", 1}},
                        "cancelling pair, intermediate also an output", kBasic, 0);
  // Two readers of one intermediate, both cancelling: no Transpose left.
  testing::ModelBuilder m(17);
  m.input("x", kFloat, {2, 3, 4, 5});
  testing::add_ints_attr(m.node("Transpose", {"x"}, {"t"}), "perm", {0, 3, 1, 2});
  testing::add_ints_attr(m.node("Transpose", {"t"}, {"u"}), "perm", {0, 2, 3, 1});
  testing::add_ints_attr(m.node("Transpose", {"t"}, {"v"}), "perm", {0, 2, 3, 1});
  m.node("Add", {"u", "v"}, {"y"});
  m.output("y", kFloat, {});
  testing::expect_fuses(m.bytes(), x, {{"Add", 1}}, "two cancelling readers", kBasic, 0);
}

// x [2,3,4] -> Reshape(s1) -> Reshape(s2) -> Neg
std::string reshapes(const std::vector<int64_t>& s1, const std::vector<int64_t>& s2, bool allowzero = false,
                     bool leak = false) {
  testing::ModelBuilder m(17);
  m.input("x", kFloat, {2, 3, 4});
  m.int64_initializer("s1", {static_cast<int64_t>(s1.size())}, s1);
  m.int64_initializer("s2", {static_cast<int64_t>(s2.size())}, s2);
  m.node("Reshape", {"x", "s1"}, {"r"});
  auto& r2 = m.node("Reshape", {"r", "s2"}, {"u"});
  if (allowzero) testing::add_int_attr(r2, "allowzero", 1);
  m.node("Neg", {"u"}, {"y"});
  m.output("y", kFloat, {});
  if (leak) m.output("r", kFloat, {});
  return m.bytes();
}

TEST(TransposeReshapeSimplificationTest, ReshapePairs) {
  const auto x = x_input({2, 3, 4});
  testing::expect_fuses(reshapes({6, 4}, {4, -1}), x, {{"Reshape", 1}, {"Neg", 1}}, "[6,4] then [4,-1]", kBasic, 0);
  testing::expect_fuses(reshapes({0, -1}, {3, 8}), x, {{"Reshape", 1}, {"Neg", 1}}, "0 in the inner shape", kBasic, 0);
}

TEST(TransposeReshapeSimplificationTest, ReshapeNearMisses) {
  const auto x = x_input({2, 3, 4});
  // 0 copies dim 0 of the intermediate (6), not of x (2).
  testing::expect_no_fusion(reshapes({6, 4}, {0, 2, 2}), x, "Reshape", "0 in the outer shape", kBasic);
  auto s = testing::session(reshapes({6, 4}, {0, 2, 2}), kBasic);
  ASSERT_TRUE(s);
  EXPECT_EQ(testing::op_counts(*s)["Reshape"], 2);
  auto leak = testing::session(reshapes({6, 4}, {4, -1}, false, true), kBasic);
  ASSERT_TRUE(leak);
  EXPECT_EQ(testing::op_counts(*leak)["Reshape"], 2) << "intermediate also an output";
}

// x -> inner(axes) -> outer(axes) -> Neg (opset 13+: axes as inputs)
std::string squeeze_pair(const std::string& inner, const std::vector<int64_t>& a1, const std::string& outer,
                         const std::vector<int64_t>& a2, const std::vector<int64_t>& x_dims) {
  testing::ModelBuilder m(17);
  m.input("x", kFloat, x_dims);
  m.int64_initializer("a1", {static_cast<int64_t>(a1.size())}, a1);
  m.int64_initializer("a2", {static_cast<int64_t>(a2.size())}, a2);
  m.node(inner, {"x", "a1"}, {"t"});
  m.node(outer, {"t", "a2"}, {"u"});
  m.node("Neg", {"u"}, {"y"});
  m.output("y", kFloat, {});
  return m.bytes();
}

TEST(TransposeReshapeSimplificationTest, SqueezeUnsqueezeRoundTrips) {
  testing::expect_fuses(squeeze_pair("Unsqueeze", {1, 3}, "Squeeze", {3, 1}, {2, 3, 4}), x_input({2, 3, 4}),
                        {{"Neg", 1}}, "Squeeze(Unsqueeze)", kBasic, 0);
  testing::expect_fuses(squeeze_pair("Squeeze", {1}, "Unsqueeze", {1}, {2, 1, 4}), x_input({2, 1, 4}), {{"Neg", 1}},
                        "Unsqueeze(Squeeze)", kBasic, 0);
  testing::expect_fuses(squeeze_pair("Squeeze", {-2}, "Unsqueeze", {1}, {2, 1, 4}), x_input({2, 1, 4}), {{"Neg", 1}},
                        "negative axis, rank known", kBasic, 0);
  // Opset 11: axes as attributes.
  testing::ModelBuilder m(11);
  m.input("x", kFloat, {2, 3});
  testing::add_ints_attr(m.node("Unsqueeze", {"x"}, {"t"}), "axes", {0});
  testing::add_ints_attr(m.node("Squeeze", {"t"}, {"u"}), "axes", {0});
  m.node("Neg", {"u"}, {"y"});
  m.output("y", kFloat, {});
  testing::expect_fuses(m.bytes(), x_input({2, 3}), {{"Neg", 1}}, "opset 11 attributes", kBasic, 0);
}

TEST(TransposeReshapeSimplificationTest, SqueezeNearMisses) {
  testing::expect_no_fusion(squeeze_pair("Unsqueeze", {1}, "Squeeze", {3}, {2, 3, 1, 4}), x_input({2, 3, 1, 4}), "Squeeze",
                            "different axes", kBasic);
  auto s = testing::session(squeeze_pair("Unsqueeze", {1}, "Squeeze", {2}, {3, 1, 4}), kBasic);
  ASSERT_TRUE(s);
  EXPECT_EQ(testing::op_counts(*s)["Unsqueeze"], 1);
}

}  // namespace
}  // namespace loom
