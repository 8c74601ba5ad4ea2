// Custom-op libraries, through examples/custom_op_library (domain
// example.ops: ScaledTanh with a CPU kernel and shape inference,
// SumOfSquares with four type-variant kernels and dynamic shapes), built in
// tree into test_plugins/custom_op_library: the host reads the schemas,
// checks nodes against them at load, infers through them, and places the
// nodes like any other on the EPs their kernels are for.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "common/model_builder.h"
#include "common/test_env.h"
#include "onnx/model_loader.h"
#include "plugin_host/plugin_registry.h"

namespace loom {
namespace {

using testing::ModelBuilder;

std::shared_ptr<Environment> custom_env(std::vector<std::string> providers = {"reference"}) {
  Config c;
  c.providers = std::move(providers);
  c.fallback = FallbackPolicy::kDeny;
  return testing::make_env(c, "custom_op_library");
}

// x -> ScaledTanh(alpha, beta) -> Relu -> y; `typed_output` false leaves y
// untyped in the model, so its type can only come from inference.
ModelBuilder scaled_tanh_model(bool typed_output = true) {
  ModelBuilder m;
  m.import_domain("example.ops", 1);
  m.input("x", ::onnx::TensorProto::FLOAT, {2, 3});
  auto& n = m.node("ScaledTanh", {"x"}, {"t"}, "scaled_tanh", "example.ops");
  testing::add_float_attr(n, "alpha", 2.0f);
  testing::add_float_attr(n, "beta", 0.5f);
  m.node("Relu", {"t"}, {"y"}, "relu");
  if (typed_output) m.output("y", ::onnx::TensorProto::FLOAT, {2, 3});
  else m.proto().mutable_graph()->add_output()->set_name("y");
  return m;
}

Expected<std::unique_ptr<Session>> create(const std::shared_ptr<Environment>& env, ModelBuilder& m) {
  return Session::create_from_bytes(env, m.bytes());
}

std::string create_error(const std::shared_ptr<Environment>& env, ModelBuilder& m) {
  auto s = create(env, m);
  return s.has_value() ? std::string("(created)") : s.status().message();
}

const PlacementReport::NodePlacement* placement_of(const Session& s, const std::string& node) {
  for (const auto& p : s.placement().nodes)
    if (p.node_name == node) return &p;
  return nullptr;
}

TEST(CustomOpLibrary, DomainIsReportedWithItsOpsAndKernels) {
  auto env = custom_env();
  ASSERT_TRUE(env);
  const PluginReport::CustomOpDomain* found = nullptr;
  for (const PluginReport& r : env->plugin_reports())
    for (const auto& d : r.custom_op_domains)
      if (d.name == "example.ops") found = &d;
  ASSERT_NE(found, nullptr);
  EXPECT_TRUE(found->refusal.empty()) << found->refusal;
  EXPECT_EQ(found->ops, (std::vector<std::string>{"ScaledTanh", "SumOfSquares"}));
  EXPECT_EQ(found->kernels, 5u);  // ScaledTanh float + SumOfSquares x 4 types
}

TEST(CustomOpLibrary, ScaledTanhRunsOnEachHostEpAndMatchesTheFormula) {
  const std::vector<float> x = {-2.0f, -0.5f, 0.0f, 0.25f, 1.0f, 3.0f};
  for (const std::string& first : {"reference", "cpu_onednn"}) {
    SCOPED_TRACE(first);
    auto env = custom_env(first == "reference" ? std::vector<std::string>{"reference"}
                                               : std::vector<std::string>{first, "reference"});
    ASSERT_TRUE(env);
    if (!testing::has_provider(first)) GTEST_SKIP() << "built without " << first;
    ModelBuilder m = scaled_tanh_model();
    auto s = create(env, m);
    ASSERT_TRUE(s.has_value()) << s.status().message();
    const auto* p = placement_of(**s, "scaled_tanh");
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->provider, first) << p->reason;
    auto out = (*s)->run({{"x", testing::float_tensor({2, 3}, x)}});
    ASSERT_TRUE(out.has_value()) << out.status().message();
    const std::vector<float> y = testing::values_of((*out)[0]);
    ASSERT_EQ(y.size(), x.size());
    for (size_t i = 0; i < x.size(); ++i) EXPECT_FLOAT_EQ(y[i], std::max(0.0f, 2.0f * std::tanh(0.5f * x[i])));
  }
}

TEST(CustomOpLibrary, ShapeInferenceTypesWhatFollowsTheCustomOp) {
  auto env = custom_env();
  ASSERT_TRUE(env);
  ModelBuilder m = scaled_tanh_model(/*typed_output=*/false);
  auto s = create(env, m);
  ASSERT_TRUE(s.has_value()) << s.status().message();
  const ValueInfo& y = (*s)->outputs()[0];
  EXPECT_EQ(y.dtype, DType::kFloat);
  ASSERT_TRUE(y.has_shape);
  ASSERT_EQ(y.shape.size(), 2u);
  EXPECT_EQ(y.shape[0].value, 2);
  EXPECT_EQ(y.shape[1].value, 3);
}

TEST(CustomOpLibrary, InProcessInferenceRunsThePluginsShapeFunction) {
  auto env = custom_env();
  ASSERT_TRUE(env);
  onnxio::LoadOptions o;
  o.onnx_inference = false;  // the registry's own inference alone
  o.schemas = env->registry().op_schemas();
  auto loaded = onnxio::load_model_bytes(scaled_tanh_model(/*typed_output=*/false).bytes(), "", "test", o);
  ASSERT_TRUE(loaded.has_value()) << loaded.status().message();
  const ir::ValueType* y = loaded->graph->type_of("y");
  ASSERT_NE(y, nullptr);
  EXPECT_EQ(y->to_string(), "float[2,3]");
}

template <class T>
void expect_sum_of_squares(int32_t onnx_type, DType dtype) {
  auto env = custom_env();
  ASSERT_TRUE(env);
  ModelBuilder m;
  m.import_domain("example.ops", 1);
  for (const char* in : {"a", "b", "c"}) m.input(in, onnx_type, {4});
  m.node("SumOfSquares", {"a", "b", "c"}, {"y"}, "sum_of_squares", "example.ops");
  m.proto().mutable_graph()->add_output()->set_name("y");
  auto s = create(env, m);
  ASSERT_TRUE(s.has_value()) << s.status().message();
  // No shape inference: the element type comes from T, the shape at run time.
  EXPECT_EQ((*s)->outputs()[0].dtype, dtype);
  EXPECT_FALSE((*s)->outputs()[0].has_shape);
  const std::vector<T> a = {1, 2, 3, 4}, b = {0, 1, 2, 3}, c = {5, 6, 7, 8};
  auto out = (*s)->run({{"a", Tensor::from_vector(dtype, {4}, a)},
                        {"b", Tensor::from_vector(dtype, {4}, b)},
                        {"c", Tensor::from_vector(dtype, {4}, c)}});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  ASSERT_EQ((*out)[0].dtype(), dtype);
  const T* y = (*out)[0].template data_as<T>();
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(y[i], a[i] * a[i] + b[i] * b[i] + c[i] * c[i]) << i;
}

TEST(CustomOpLibrary, SumOfSquaresHasAKernelPerTypeVariant) {
  expect_sum_of_squares<float>(::onnx::TensorProto::FLOAT, DType::kFloat);
  expect_sum_of_squares<double>(::onnx::TensorProto::DOUBLE, DType::kDouble);
  expect_sum_of_squares<int32_t>(::onnx::TensorProto::INT32, DType::kInt32);
  expect_sum_of_squares<int64_t>(::onnx::TensorProto::INT64, DType::kInt64);
}

TEST(CustomOpLibrary, KernelErrorsReachTheCallerAndTheSessionKeepsWorking) {
  auto env = custom_env();
  ASSERT_TRUE(env);
  ModelBuilder m;
  m.import_domain("example.ops", 1);
  m.input("a", ::onnx::TensorProto::FLOAT, {-1});
  m.input("b", ::onnx::TensorProto::FLOAT, {-1});
  m.node("SumOfSquares", {"a", "b"}, {"y"}, "sum_of_squares", "example.ops");
  m.output("y", ::onnx::TensorProto::FLOAT, {-1});
  auto s = create(env, m);
  ASSERT_TRUE(s.has_value()) << s.status().message();
  auto bad = (*s)->run({{"a", testing::float_tensor({2}, {1, 2})}, {"b", testing::float_tensor({3}, {1, 2, 3})}});
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.status().message().find("sum_of_squares"), std::string::npos) << bad.status().message();
  auto good = (*s)->run({{"a", testing::float_tensor({2}, {1, 2})}, {"b", testing::float_tensor({2}, {3, 4})}});
  ASSERT_TRUE(good.has_value()) << good.status().message();
  EXPECT_EQ(testing::values_of((*good)[0]), (std::vector<float>{10, 20}));
}

// Each model breaks one rule of the schema; the error names the node, what
// is wrong and the op.
TEST(CustomOpLibrary, NodesThatBreakTheSchemaAreRefusedAtLoad) {
  auto env = custom_env();
  ASSERT_TRUE(env);
  struct Case {
    const char* name;
    std::function<void(ModelBuilder&)> build;
    const char* expected;
  };
  auto tanh_node = [](ModelBuilder& m, std::vector<std::string> inputs) -> ::onnx::NodeProto& {
    m.import_domain("example.ops", 1);
    m.input("x", ::onnx::TensorProto::FLOAT, {2});
    m.input("x2", ::onnx::TensorProto::FLOAT, {2});
    m.output("y", ::onnx::TensorProto::FLOAT, {2});
    return m.node("ScaledTanh", inputs, {"y"}, "bad_node", "example.ops");
  };
  const std::vector<Case> cases = {
      {"missing required attribute",
       [&](ModelBuilder& m) { tanh_node(m, {"x"}); },
       "required attribute 'alpha' is missing"},
      {"attribute of the wrong type",
       [&](ModelBuilder& m) { testing::add_int_attr(tanh_node(m, {"x"}), "alpha", 2); },
       "attribute 'alpha' is int, the schema declares float"},
      {"undeclared attribute",
       [&](ModelBuilder& m) {
         auto& n = tanh_node(m, {"x"});
         testing::add_float_attr(n, "alpha", 1);
         testing::add_float_attr(n, "gamma", 1);
       },
       "attribute 'gamma' is not in the schema (declared: alpha, beta)"},
      {"too many inputs",
       [&](ModelBuilder& m) { testing::add_float_attr(tanh_node(m, {"x", "x2"}), "alpha", 1); },
       "has 2 input(s), the schema takes 1"},
      {"element type not allowed",
       [&](ModelBuilder& m) {
         m.import_domain("example.ops", 1);
         m.input("x", ::onnx::TensorProto::INT32, {2});
         m.output("y", ::onnx::TensorProto::INT32, {2});
         testing::add_float_attr(m.node("ScaledTanh", {"x"}, {"y"}, "bad_node", "example.ops"), "alpha", 1);
       },
       "input 'x' is int32, but T allows float"},
      {"one type parameter, two types",
       [&](ModelBuilder& m) {
         m.import_domain("example.ops", 1);
         m.input("a", ::onnx::TensorProto::FLOAT, {2});
         m.input("b", ::onnx::TensorProto::DOUBLE, {2});
         m.output("y", ::onnx::TensorProto::FLOAT, {2});
         m.node("SumOfSquares", {"a", "b"}, {"y"}, "bad_node", "example.ops");
       },
       "input 'b' is double, but input 'a' bound T to float"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ModelBuilder m;
    c.build(m);
    const std::string error = create_error(env, m);
    EXPECT_NE(error.find("node 'bad_node'"), std::string::npos) << error;
    EXPECT_NE(error.find(c.expected), std::string::npos) << error;
    EXPECT_NE(error.find("example.ops."), std::string::npos) << error;
  }
}

// Without the library, the same model is refused naming the node nobody
// can run.
TEST(CustomOpLibrary, WithoutTheLibraryTheNodeIsNamedAsUnrunnable) {
  ModelBuilder m = scaled_tanh_model();
  const std::string error = create_error(testing::reference_env(), m);
  EXPECT_NE(error.find("scaled_tanh"), std::string::npos) << error;
  EXPECT_NE(error.find("no kernel for example.ops.ScaledTanh"), std::string::npos) << error;
}

}  // namespace
}  // namespace loom
