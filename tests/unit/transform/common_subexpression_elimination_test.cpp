// common_subexpression_elimination (basic): identical nodes and identical
// small initializers merge; nodes that differ in attributes or operand order,
// and random ops, do not.
#include <gtest/gtest.h>

#include "common/model_builder.h"
#include "unit/transform/fusion_checks.h"

namespace loom {
namespace {

constexpr auto kFloat = ::onnx::TensorProto::FLOAT;
constexpr auto kBasic = OptimizationLevel::kBasic;
using testing::wave;

std::map<std::string, Tensor> x_input() { return {{"x", testing::float_tensor({2, 6}, wave(12, 2.f))}}; }

void set_float(::onnx::NodeProto& n, const std::string& name, float v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

TEST(CommonSubexpressionEliminationTest, Listed) {
  testing::expect_listed_pass("common_subexpression_elimination", kBasic);
}

TEST(CommonSubexpressionEliminationTest, IdenticalNodesAndTheirReadersMerge) {
  testing::ModelBuilder m(17);
  m.input("x", kFloat, {2, 6});
  m.node("Relu", {"x"}, {"a1"});
  m.node("Relu", {"x"}, {"a2"});
  m.node("Sigmoid", {"a1"}, {"s1"});
  m.node("Sigmoid", {"a2"}, {"s2"});
  m.node("Sub", {"s1", "s2"}, {"d"});
  m.node("Add", {"d", "a2"}, {"y"});
  m.output("y", kFloat, {});
  testing::expect_fuses(m.bytes(), x_input(), {{"Relu", 1}, {"Sigmoid", 1}, {"Sub", 1}, {"Add", 1}}, "Relu/Sigmoid chains",
                        kBasic, 0);
}

TEST(CommonSubexpressionEliminationTest, IdenticalInitializersMerge) {
  testing::ModelBuilder m(17);
  m.input("x", kFloat, {2, 6});
  m.float_initializer("c1", {6}, wave(6, 1.f, 1.f));
  m.float_initializer("c2", {6}, wave(6, 1.f, 1.f));
  m.float_initializer("c3", {6}, wave(6, 1.f, 2.f));
  m.node("Mul", {"x", "c1"}, {"m1"});
  m.node("Mul", {"x", "c2"}, {"m2"});
  m.node("Mul", {"x", "c3"}, {"m3"});
  m.node("Sum", {"m1", "m2", "m3"}, {"y"});
  m.output("y", kFloat, {});
  testing::expect_fuses(m.bytes(), x_input(), {{"Mul", 2}, {"Sum", 1}}, "x*c1 and x*c2 with c1 == c2", kBasic, 0);
}

TEST(CommonSubexpressionEliminationTest, DuplicateGraphOutputsKeepTheirNames) {
  testing::ModelBuilder m(17);
  m.input("x", kFloat, {2, 6});
  m.node("Relu", {"x"}, {"y1"});
  m.node("Relu", {"x"}, {"y2"});
  m.output("y1", kFloat, {});
  m.output("y2", kFloat, {});
  testing::expect_fuses(m.bytes(), x_input(), {{"Relu", 1}, {"Identity", 1}}, "both outputs", kBasic, 0);
}

TEST(CommonSubexpressionEliminationTest, NearMisses) {
  {
    testing::ModelBuilder m(17);
    m.input("x", kFloat, {2, 6});
    set_float(m.node("LeakyRelu", {"x"}, {"a"}), "alpha", 0.1f);
    set_float(m.node("LeakyRelu", {"x"}, {"b"}), "alpha", 0.2f);
    m.node("Add", {"a", "b"}, {"y"});
    m.output("y", kFloat, {});
    testing::expect_fuses(m.bytes(), x_input(), {{"LeakyRelu", 2}, {"Add", 1}}, "different attributes", kBasic, 0);
  }
  {
    testing::ModelBuilder m(17);
    m.input("x", kFloat, {2, 6});
    m.input("z", kFloat, {2, 6});
    m.node("Sub", {"x", "z"}, {"a"});
    m.node("Sub", {"z", "x"}, {"b"});
    m.node("Add", {"x", "z"}, {"c"});
    m.node("Add", {"z", "x"}, {"d"});
    m.node("Sum", {"a", "b", "c", "d"}, {"y"});
    m.output("y", kFloat, {});
    auto in = x_input();
    in["z"] = testing::float_tensor({2, 6}, wave(12, 1.f, 1.f));
    testing::expect_fuses(m.bytes(), in, {{"Sub", 2}, {"Add", 2}, {"Sum", 1}}, "operands in another order", kBasic, 0);
  }
}

TEST(CommonSubexpressionEliminationTest, RandomOpsAreNotMerged) {
  testing::ModelBuilder m(17);
  m.input("x", kFloat, {2, 6});
  m.node("RandomUniformLike", {"x"}, {"r1"});
  m.node("RandomUniformLike", {"x"}, {"r2"});
  m.node("Sub", {"r1", "r2"}, {"y"});
  m.output("y", kFloat, {});
  auto s = testing::session(m.bytes(), kBasic);
  ASSERT_TRUE(s);
  EXPECT_EQ(testing::op_counts(*s)["RandomUniformLike"], 2);
}

}  // namespace
}  // namespace loom
