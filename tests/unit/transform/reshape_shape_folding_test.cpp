// Reshape shape folding: Reshape targets assembled from the reshaped tensor's
// own dims become constants (the Shape chains die); near misses keep their
// chains; results never change.
#include <gtest/gtest.h>

#include "common/model_builder.h"
#include "common/test_env.h"

namespace loom {
namespace {

using testing::float_tensor;
using testing::values_of;

// y = Reshape(x, Concat(Unsqueeze(Gather(Shape(x), i0)), Unsqueeze(Gather(Shape(x), i1)), [2, -1]))
// for x [B, S, 8] with symbolic B, S: the BERT head split.
std::string head_split(int64_t i0, int64_t i1, bool allowzero = false, const std::string& shape_of = "x") {
  testing::ModelBuilder m(14);
  m.input("x", ::onnx::TensorProto::FLOAT, {-1, -1, 8});
  m.input("other", ::onnx::TensorProto::FLOAT, {-1, -1, 8});
  m.int64_initializer("i0", {}, {i0});
  m.int64_initializer("i1", {}, {i1});
  m.int64_initializer("axes", {1}, {0});
  m.int64_initializer("tail", {2}, {2, -1});
  m.node("Shape", {shape_of}, {"s"});
  m.node("Gather", {"s", "i0"}, {"g0"});
  m.node("Gather", {"s", "i1"}, {"g1"});
  m.node("Unsqueeze", {"g0", "axes"}, {"u0"});
  m.node("Unsqueeze", {"g1", "axes"}, {"u1"});
  testing::add_int_attr(m.node("Concat", {"u0", "u1", "tail"}, {"shape"}), "axis", 0);
  auto& r = m.node("Reshape", {"x", "shape"}, {"y"});
  if (allowzero) testing::add_int_attr(r, "allowzero", 1);
  m.output("y", ::onnx::TensorProto::FLOAT, {});
  return m.bytes();
}

int count_op(const Session& s, const std::string& op) {
  int n = 0;
  for (const auto& p : s.placement().nodes) n += p.op_type == op;
  return n;
}

std::vector<float> iota(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i);
  return v;
}

void expect_reshaped(const Session& s, const Dims& want) {
  auto out = s.run({{"x", float_tensor({2, 3, 8}, iota(48))}, {"other", float_tensor({2, 3, 8}, iota(48))}});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ((*out)[0].dims(), want);
  EXPECT_EQ(values_of((*out)[0]), iota(48));
}

TEST(ReshapeShapeFoldingTest, OwnDimsBecomeZerosAndTheChainDies) {
  auto s = Session::create_from_bytes(testing::reference_env(), head_split(0, 1));
  ASSERT_TRUE(s.has_value()) << s.status().message();
  EXPECT_EQ(count_op(**s, "Shape"), 0);
  EXPECT_EQ(count_op(**s, "Concat"), 0);
  EXPECT_EQ(count_op(**s, "Reshape"), 1);
  expect_reshaped(**s, {2, 3, 2, 4});
}

TEST(ReshapeShapeFoldingTest, NegativeIndexIsResolvedThroughTheRank) {
  auto s = Session::create_from_bytes(testing::reference_env(), head_split(-3, -2));
  ASSERT_TRUE(s.has_value()) << s.status().message();
  EXPECT_EQ(count_op(**s, "Shape"), 0);
  expect_reshaped(**s, {2, 3, 2, 4});
}

TEST(ReshapeShapeFoldingTest, NearMissesKeepTheirChains) {
  struct Case {
    std::string what;
    std::string model;
    Dims want;
  };
  const std::vector<Case> cases = {
      // dim 1 placed at position 0: 0 would copy dim 0 instead
      {"swapped dims", head_split(1, 0), {3, 2, 2, 4}},
      // allowzero = 1: a 0 would mean an empty dim
      {"allowzero", head_split(0, 1, true), {2, 3, 2, 4}},
      // the dims of another tensor (equal here, but not provably)
      {"shape of another tensor", head_split(0, 1, false, "other"), {2, 3, 2, 4}},
  };
  for (const Case& c : cases) {
    auto s = Session::create_from_bytes(testing::reference_env(), c.model);
    ASSERT_TRUE(s.has_value()) << c.what << ": " << s.status().message();
    EXPECT_EQ(count_op(**s, "Shape"), 1) << c.what;
    expect_reshaped(**s, c.want);
  }
}

}  // namespace
}  // namespace loom
