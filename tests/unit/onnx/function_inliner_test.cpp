// Model-local functions (onnx/function_inliner.h) run end to end on the
// reference EP: calls expanded with their own value names, attributes by
// reference (given at the call, or the op's default), functions calling
// functions, a body with an If reading a body value, an omitted optional
// output; and refused, naming the call: recursion, an expansion past the
// node bound (fast), more inputs than declared, another opset version.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <functional>

#include "common/model_builder.h"
#include "common/test_env.h"

namespace loom {
namespace {

using ::onnx::TensorProto;
using testing::ModelBuilder;

::onnx::FunctionProto& add_function(ModelBuilder& m, const std::string& name, std::vector<std::string> inputs,
                                    std::vector<std::string> outputs) {
  ::onnx::FunctionProto* f = m.proto().add_functions();
  f->set_name(name);
  f->set_domain("local");
  for (const auto& i : inputs) f->add_input(i);
  for (const auto& o : outputs) f->add_output(o);
  for (const auto& [domain, version] : {std::pair<std::string, int>{"", 17}, {"local", 1}}) {
    auto* op = f->add_opset_import();
    op->set_domain(domain);
    op->set_version(version);
  }
  return *f;
}

::onnx::NodeProto& body_node(::onnx::FunctionProto& f, const std::string& op, std::vector<std::string> in,
                             std::vector<std::string> out, const std::string& domain = "") {
  ::onnx::NodeProto* n = f.add_node();
  n->set_op_type(op);
  n->set_domain(domain);
  for (const auto& i : in) n->add_input(i);
  for (const auto& o : out) n->add_output(o);
  return *n;
}

std::vector<float> run_model(ModelBuilder& m, const std::vector<float>& x) {
  auto env = testing::make_env();
  auto s = Session::create_from_bytes(env, m.bytes());
  EXPECT_TRUE(s.has_value()) << s.status().message();
  if (!s) return {};
  auto out = (*s)->run({{"x", testing::float_tensor({static_cast<int64_t>(x.size())}, x)}});
  EXPECT_TRUE(out.has_value()) << out.status().message();
  if (!out) return {};
  return testing::values_of((*out)[0]);
}

std::string session_error(ModelBuilder& m) {
  auto s = Session::create_from_bytes(testing::make_env(), m.bytes());
  return s.has_value() ? std::string("(created)") : s.status().message();
}

// F(x) = Relu(x) + x, with body values named like the graph's.
void add_relu_plus(ModelBuilder& m) {
  auto& f = add_function(m, "relu_plus", {"x"}, {"y"});
  body_node(f, "Relu", {"x"}, {"t"});
  body_node(f, "Add", {"t", "x"}, {"y"});
}

TEST(ModelLocalFunctions, CallsAreExpandedWithTheirOwnNames) {
  ModelBuilder m;
  m.import_domain("local", 1);
  m.input("x", TensorProto::FLOAT, {3});
  m.node("relu_plus", {"x"}, {"t"}, "first", "local");  // "t" is also a body value's name
  m.node("relu_plus", {"t"}, {"y"}, "second", "local");
  m.output("y", TensorProto::FLOAT, {3});
  add_relu_plus(m);
  // F(F(x)): x = -1 -> -1 -> -1; x = 2 -> 4 -> 8.
  EXPECT_EQ(run_model(m, {-1.f, 2.f, 0.5f}), (std::vector<float>{-1.f, 8.f, 2.f}));
}

TEST(ModelLocalFunctions, AttributesByReferenceComeFromTheCallOrTheOpDefault) {
  ModelBuilder m;
  m.import_domain("local", 1);
  m.input("x", TensorProto::FLOAT, {2});
  auto& given = m.node("leaky", {"x"}, {"a"}, "given", "local");
  testing::add_float_attr(given, "slope", 0.5f);
  m.node("leaky", {"a"}, {"y"}, "defaulted", "local");  // LeakyRelu's alpha defaults to 0.01
  m.output("y", TensorProto::FLOAT, {2});
  auto& f = add_function(m, "leaky", {"x"}, {"y"});
  f.add_attribute("slope");
  auto& n = body_node(f, "LeakyRelu", {"x"}, {"y"});
  auto* a = n.add_attribute();
  a->set_name("alpha");
  a->set_type(::onnx::AttributeProto::FLOAT);
  a->set_ref_attr_name("slope");
  const std::vector<float> y = run_model(m, {-4.f, 3.f});
  ASSERT_EQ(y.size(), 2u);
  EXPECT_NEAR(y[0], -4.f * 0.5f * 0.01f, 1e-7f);
  EXPECT_EQ(y[1], 3.f);
}

TEST(ModelLocalFunctions, FunctionsCallFunctionsAndBodiesHoldSubgraphs) {
  ModelBuilder m;
  m.import_domain("local", 1);
  m.input("x", TensorProto::FLOAT, {3});
  m.input("c", TensorProto::BOOL, {});
  m.node("outer", {"x", "c"}, {"y"}, "call", "local");
  m.output("y", TensorProto::FLOAT, {3});
  add_relu_plus(m);
  // outer(x, c) = If c then Neg(relu_plus(x)) else relu_plus(x): the
  // branches read the body value "r".
  auto& f = add_function(m, "outer", {"x", "c"}, {"y"});
  body_node(f, "relu_plus", {"x"}, {"r"}, "local");
  auto& iff = body_node(f, "If", {"c"}, {"y"});
  auto branch = [](const std::string& op) {
    ::onnx::GraphProto g;
    g.set_name(op + "_branch");
    auto* n = g.add_node();
    n->set_op_type(op);
    n->add_input("r");
    n->add_output("out");
    g.add_output()->set_name("out");
    g.mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(TensorProto::FLOAT);
    return g;
  };
  auto* then_attr = iff.add_attribute();
  then_attr->set_name("then_branch");
  then_attr->set_type(::onnx::AttributeProto::GRAPH);
  *then_attr->mutable_g() = branch("Neg");
  auto* else_attr = iff.add_attribute();
  else_attr->set_name("else_branch");
  else_attr->set_type(::onnx::AttributeProto::GRAPH);
  *else_attr->mutable_g() = branch("Identity");
  auto env = testing::make_env();
  auto s = Session::create_from_bytes(env, m.bytes());
  ASSERT_TRUE(s.has_value()) << s.status().message();
  const Tensor x = testing::float_tensor({3}, {-1.f, 2.f, 0.5f});
  for (bool c : {true, false}) {
    Tensor cond = Tensor::zeros(DType::kBool, {}).value();
    *cond.mutable_data_as<bool>() = c;
    auto out = (*s)->run({{"x", x}, {"c", cond}});
    ASSERT_TRUE(out.has_value()) << out.status().message();
    const float sign = c ? -1.f : 1.f;
    EXPECT_EQ(testing::values_of((*out)[0]), (std::vector<float>{sign * -1.f, sign * 4.f, sign * 1.f})) << c;
  }
}

TEST(ModelLocalFunctions, AnOmittedOptionalOutputIsLeftUnnamed) {
  ModelBuilder m;
  m.import_domain("local", 1);
  m.input("x", TensorProto::FLOAT, {2});
  m.node("two", {"x"}, {"y"}, "call", "local");  // the second output is not asked for
  m.output("y", TensorProto::FLOAT, {2});
  auto& f = add_function(m, "two", {"x"}, {"y", "z"});
  body_node(f, "Neg", {"x"}, {"y"});
  body_node(f, "Abs", {"x"}, {"z"});
  EXPECT_EQ(run_model(m, {1.f, -2.f}), (std::vector<float>{-1.f, 2.f}));
}

TEST(ModelLocalFunctions, RecursionIsRefused) {
  ModelBuilder m;
  m.import_domain("local", 1);
  m.input("x", TensorProto::FLOAT, {2});
  m.node("ping", {"x"}, {"y"}, "call", "local");
  m.output("y", TensorProto::FLOAT, {2});
  body_node(add_function(m, "ping", {"x"}, {"y"}), "pong", {"x"}, {"y"}, "local");
  body_node(add_function(m, "pong", {"x"}, {"y"}), "ping", {"x"}, {"y"}, "local");
  const std::string e = session_error(m);
  EXPECT_NE(e.find("calls itself"), std::string::npos) << e;
  EXPECT_NE(e.find("node 'call'"), std::string::npos) << e;
}

// 61 functions, each calling the previous twice: 2^60 nodes if expanded.
TEST(ModelLocalFunctions, AnExponentialExpansionIsRefusedAtOnce) {
  ModelBuilder m;
  m.import_domain("local", 1);
  m.input("x", TensorProto::FLOAT, {2});
  m.node("f60", {"x"}, {"y"}, "call", "local");
  m.output("y", TensorProto::FLOAT, {2});
  body_node(add_function(m, "f0", {"x"}, {"y"}), "Relu", {"x"}, {"y"});
  for (int i = 1; i < 61; ++i) {
    auto& f = add_function(m, "f" + std::to_string(i), {"x"}, {"y"});
    body_node(f, "f" + std::to_string(i - 1), {"x"}, {"t"}, "local");
    body_node(f, "f" + std::to_string(i - 1), {"t"}, {"y"}, "local");
  }
  const auto start = std::chrono::steady_clock::now();
  const std::string e = session_error(m);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_NE(e.find("expanding the model-local functions makes more than"), std::string::npos) << e;
}

TEST(ModelLocalFunctions, ACallWithMoreInputsThanDeclaredIsRefused) {
  ModelBuilder m;
  m.import_domain("local", 1);
  m.input("x", TensorProto::FLOAT, {2});
  m.node("relu_plus", {"x", "x"}, {"y"}, "call", "local");
  m.output("y", TensorProto::FLOAT, {2});
  add_relu_plus(m);
  const std::string e = session_error(m);
  EXPECT_NE(e.find("node 'call' (local.relu_plus) has 2 inputs"), std::string::npos) << e;
}

TEST(ModelLocalFunctions, AnotherOpsetVersionInAFunctionIsRefused) {
  ModelBuilder m(13);
  m.import_domain("local", 1);
  m.input("x", TensorProto::FLOAT, {2});
  m.node("relu_plus", {"x"}, {"y"}, "call", "local");
  m.output("y", TensorProto::FLOAT, {2});
  add_relu_plus(m);  // imports ai.onnx 17
  const std::string e = session_error(m);
  EXPECT_NE(e.find("imports ai.onnx opset 17 and the model opset 13"), std::string::npos) << e;
}

}  // namespace
}  // namespace loom
