// Declared types that contradict what computes them (issue 26): If branches
// returning other types than each other or than the node's declared outputs
// are refused at load naming the rule; a value whose node makes another
// element type than the model declares fails the run naming the value,
// rather than handing the caller a tensor of an unexpected type.
#include <gtest/gtest.h>

#include <string>

#include "hostile_model_support.h"

namespace loom {
namespace {

using namespace hostile_testing;  // the helpers the hostile-model tests share

constexpr int32_t kFloat = TensorProto::FLOAT, kInt64 = TensorProto::INT64;

// A branch casting outer `x` to `made`, its output declared `declared`.
::onnx::GraphProto cast_branch(const std::string& name, int32_t made, int32_t declared) {
  ::onnx::GraphProto g;
  g.set_name(name);
  auto* n = g.add_node();
  n->set_op_type("Cast");
  n->set_name(name + "_cast");
  n->add_input("x");
  n->add_output(name + "_y");
  auto* to = n->add_attribute();
  to->set_name("to");
  to->set_type(::onnx::AttributeProto::INT);
  to->set_i(made);
  auto* o = g.add_output();
  o->set_name(name + "_y");
  o->mutable_type()->mutable_tensor_type()->set_elem_type(declared);
  return g;
}

struct Branch {
  int32_t made, declared;
};

// y = If(c, then: Cast(x), else: Cast(x)), y declared `y_type`.
std::string if_model(Branch then_b, Branch else_b, int32_t y_type) {
  ModelBuilder m;
  m.input("c", TensorProto::BOOL, {});
  m.input("x", TensorProto::FLOAT, {2});
  auto& n = m.node("If", {"c"}, {"y"}, "choose");
  for (const auto& [attr, b] : {std::pair{"then_branch", then_b}, std::pair{"else_branch", else_b}}) {
    auto* a = n.add_attribute();
    a->set_name(attr);
    a->set_type(::onnx::AttributeProto::GRAPH);
    *a->mutable_g() = cast_branch(attr, b.made, b.declared);
  }
  m.output("y", y_type, {2});
  return m.bytes();
}

Expected<std::vector<Tensor>> run_if(Session& s, bool cond) {
  return s.run({{"c", Tensor::from_vector(DType::kBool, {}, std::vector<uint8_t>{cond})},
                {"x", testing::float_tensor({2}, {1, 2})}});
}

TEST(HostileTypes, IfBranchesReturningDifferentTypesAreRefusedAtLoad) {
  const std::string error = session_error(if_model({kInt64, kInt64}, {kFloat, kFloat}, kFloat));
  EXPECT_HAS(error, "node 'choose' (If)");
  EXPECT_HAS(error, "then_branch returns INT64 as output 0, else_branch FLOAT");
  EXPECT_HAS(error, "both branches return the same types");
  expect_good_model_runs();
}

TEST(HostileTypes, IfOutputDeclaredOtherThanItsBranchesIsRefusedAtLoad) {
  const std::string error = session_error(if_model({kFloat, kFloat}, {kFloat, kFloat}, kInt64));
  EXPECT_HAS(error, "output 'y' is declared INT64, its branches return FLOAT");
}

TEST(HostileTypes, IfBranchReturningTooFewValuesIsRefusedAtLoad) {
  ModelBuilder m;
  m.input("c", TensorProto::BOOL, {});
  m.input("x", TensorProto::FLOAT, {2});
  auto& n = m.node("If", {"c"}, {"y", "z"}, "choose");
  for (const char* attr : {"then_branch", "else_branch"}) {
    auto* a = n.add_attribute();
    a->set_name(attr);
    a->set_type(::onnx::AttributeProto::GRAPH);
    *a->mutable_g() = cast_branch(attr, kFloat, kFloat);
  }
  m.output("y", kFloat, {2});
  m.output("z", kFloat, {2});
  EXPECT_HAS(session_error(m.bytes()), "then_branch returns 1 value(s) and else_branch 1 for 2 output(s)");
}

// The branch's own declaration is a lie: its Cast makes int64. Only the run
// that takes the branch can tell; it fails naming the value, and the session
// keeps working for the other branch.
TEST(HostileTypes, BranchMakingAnotherTypeThanItDeclaresFailsTheRunNamingTheValue) {
  auto s = Session::create_from_bytes(testing::reference_env(), if_model({kInt64, kFloat}, {kFloat, kFloat}, kFloat));
  ASSERT_TRUE(s) << s.status().message();
  auto bad = run_if(**s, true);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidGraph) << bad.status().message();
  EXPECT_HAS(bad.status().message(), "value 'then_branch_y' is float by the model's types, but the node makes int64");
  auto good = run_if(**s, false);
  ASSERT_TRUE(good) << good.status().message();
  EXPECT_EQ((*good)[0].dtype(), DType::kFloat);
}

// The same for a graph output made by a node of the main graph.
TEST(HostileTypes, GraphOutputOfAnotherTypeThanDeclaredFailsTheRun) {
  ModelBuilder m;
  m.input("x", TensorProto::FLOAT, {2});
  auto& n = m.node("Cast", {"x"}, {"y"}, "cast");
  testing::add_int_attr(n, "to", kInt64);
  m.output("y", kFloat, {2});
  auto s = Session::create_from_bytes(testing::reference_env(), m.bytes());
  if (!s) {  // refusing at load is as good
    EXPECT_HAS(s.status().message(), "'y'");
    return;
  }
  auto out = (*s)->run({{"x", testing::float_tensor({2}, {1, 2})}});
  ASSERT_FALSE(out.has_value()) << "ran, y is " << dtype_name((*out)[0].dtype());
  EXPECT_HAS(out.status().message(), "value 'y' is float by the model's types, but the node makes int64");
}

}  // namespace
}  // namespace loom
