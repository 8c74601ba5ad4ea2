// Defensive plugin loading through the real plugin host: every broken test
// plugin is refused with a message that names its problem while the process
// keeps running, and plugins of an older or newer ABI minor load and run.
// The plugins are built from tests/abi/plugins/ into test_plugins/<case>/.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "loom/environment.h"
#include "loom/plugin_api.h"
#include "loom/session.h"
#include "onnx/model_loader.h"
#include "plugin_host/plugin_registry.h"

namespace {

using loom::plugin_host::PluginRegistry;

const char* const kProvider = "abi_test_ep";

std::string case_dir(const std::string& name) { return std::string(LOOM_ABI_TEST_PLUGIN_DIR) + "/" + name; }

// Scans exactly one case folder and returns the one report it produced.
loom::PluginReport scan_one(PluginRegistry& registry, const std::string& name) {
  loom::Status st = registry.scan_directory(case_dir(name));
  EXPECT_TRUE(st.is_ok()) << st.message();
  EXPECT_EQ(registry.reports().size(), 1u) << "expected one library in " << case_dir(name);
  return registry.reports().empty() ? loom::PluginReport{} : registry.reports().front();
}

// Expects the single library of case `name` to be refused with a reason
// containing every one of `needles`.
void expect_refused(const std::string& name, const std::vector<std::string>& needles) {
  PluginRegistry registry;
  loom::PluginReport report = scan_one(registry, name);
  EXPECT_FALSE(report.loaded) << name << " should have been refused";
  EXPECT_TRUE(registry.providers().empty());
  for (const std::string& needle : needles)
    EXPECT_NE(report.refusal.find(needle), std::string::npos)
        << name << ": refusal \"" << report.refusal << "\" does not mention \"" << needle << "\"";
}

std::string abi_version(uint32_t major, uint32_t minor) { return std::to_string(major) + "." + std::to_string(minor); }

// --- broken plugins are refused, naming the problem ---

TEST(AbiPluginLoading, LibraryWithoutEntrySymbolIsRefused) {
  expect_refused("missing_entry", {"missing entry symbol", LOOM_PLUGIN_ENTRY_SYMBOL});
}

TEST(AbiPluginLoading, WrongMajorIsRefusedNamingBothVersions) {
  expect_refused("wrong_major", {"majors must match",
                                 abi_version(LOOM_ABI_VERSION_MAJOR + 1, LOOM_ABI_VERSION_MINOR),
                                 abi_version(LOOM_ABI_VERSION_MAJOR, LOOM_ABI_VERSION_MINOR)});
}

TEST(AbiPluginLoading, MissingRequiredSlotIsRefusedNamingTheSlot) {
  expect_refused("missing_slot", {"get_ep_factories", "missing"});
}

TEST(AbiPluginLoading, TooSmallTableIsRefused) {
  expect_refused("small_table", {"too small", std::to_string(LOOM_STRUCT_SIZE(LOOM_PluginApi, release)) + " bytes"});
}

TEST(AbiPluginLoading, FailingInitIsRefusedWithThePluginsMessage) {
  expect_refused("init_fails", {"init failed on purpose"});
}

TEST(AbiPluginLoading, MissingDependencyIsRefusedNamingTheLibrary) {
  expect_refused("missing_dependency", {"libloom_test_missing_dep.so", "cannot open shared object file"});
}

// Every broken case in one process, twice over: refusing never takes the
// process down or poisons later loads.
TEST(AbiPluginLoading, RefusalsLeaveTheProcessUsable) {
  for (int round = 0; round < 2; ++round) {
    PluginRegistry registry;
    for (const char* name :
         {"missing_entry", "wrong_major", "missing_slot", "small_table", "init_fails", "missing_dependency"})
      ASSERT_TRUE(registry.scan_directory(case_dir(name)).is_ok());
    ASSERT_TRUE(registry.scan_directory(case_dir("good")).is_ok());
    ASSERT_EQ(registry.reports().size(), 7u);
    for (size_t i = 0; i + 1 < registry.reports().size(); ++i) EXPECT_FALSE(registry.reports()[i].loaded);
    EXPECT_TRUE(registry.reports().back().loaded) << registry.reports().back().refusal;
    EXPECT_NE(registry.find(kProvider), nullptr);
  }
}

TEST(AbiPluginLoading, MissingPluginDirectoryFailsEnvironmentCreationNamingIt) {
  loom::Config config;
  const std::string dir = case_dir("no_such_case_folder");
  config.plugin_dirs = {dir};
  auto env = loom::Environment::create(config);
  ASSERT_FALSE(env.has_value());
  EXPECT_NE(env.status().message().find(dir), std::string::npos) << env.status().message();
}

// --- plugins that must load and run ---

// y = test.abi.Negate(x) on float[2,3].
std::string negate_model_bytes() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("loom_abi_tests");
  auto* onnx_opset = model.add_opset_import();
  onnx_opset->set_domain("");
  onnx_opset->set_version(17);
  auto* test_opset = model.add_opset_import();
  test_opset->set_domain("test.abi");
  test_opset->set_version(1);
  onnx::GraphProto* graph = model.mutable_graph();
  graph->set_name("negate");
  onnx::NodeProto* node = graph->add_node();
  node->set_name("negate");
  node->set_op_type("Negate");
  node->set_domain("test.abi");
  node->add_input("x");
  node->add_output("y");
  for (auto [value, name] : {std::pair{graph->add_input(), "x"}, std::pair{graph->add_output(), "y"}}) {
    value->set_name(name);
    auto* tensor_type = value->mutable_type()->mutable_tensor_type();
    tensor_type->set_elem_type(onnx::TensorProto::FLOAT);
    tensor_type->mutable_shape()->add_dim()->set_dim_value(2);
    tensor_type->mutable_shape()->add_dim()->set_dim_value(3);
  }
  std::string bytes;
  EXPECT_TRUE(model.SerializeToString(&bytes));
  return bytes;
}

std::shared_ptr<loom::Environment> environment_for(const std::string& name, loom::FallbackPolicy fallback) {
  loom::Config config;
  config.plugin_dirs = {case_dir(name)};
  config.providers = {kProvider};
  config.fallback = fallback;
  auto env = loom::Environment::create(config);
  EXPECT_TRUE(env.has_value()) << env.status().message();
  return env.has_value() ? *env : nullptr;
}

const loom::PluginReport* report_in(const loom::Environment& env, const std::string& name) {
  for (const loom::PluginReport& r : env.plugin_reports())
    if (r.path.rfind(case_dir(name) + "/", 0) == 0) return &r;
  return nullptr;
}

// Loads case `name`, checks it reports `abi`, then runs the Negate model on
// abi_test_ep alone (fallback denied, so nothing else may run the node).
void expect_loads_and_runs(const std::string& name, const std::string& abi, uint32_t agreed_minor) {
  auto env = environment_for(name, loom::FallbackPolicy::kDeny);
  ASSERT_NE(env, nullptr);
  const loom::PluginReport* report = report_in(*env, name);
  ASSERT_NE(report, nullptr) << "no report for " << case_dir(name);
  ASSERT_TRUE(report->loaded) << report->refusal;
  EXPECT_EQ(report->abi, abi);
  ASSERT_EQ(report->factories.size(), 1u);
  EXPECT_EQ(report->factories[0].name, kProvider);
  const auto providers = env->available_providers();
  EXPECT_NE(std::find(providers.begin(), providers.end(), kProvider), providers.end());
  const auto* provider = env->registry().find(kProvider);
  ASSERT_NE(provider, nullptr);
  EXPECT_EQ(provider->library->agreed_minor(), agreed_minor);

  auto session = loom::Session::create_from_bytes(env, negate_model_bytes());
  ASSERT_TRUE(session.has_value()) << session.status().message();
  ASSERT_EQ((*session)->placement().nodes.size(), 1u);
  EXPECT_EQ((*session)->placement().nodes[0].provider, kProvider);

  const std::vector<float> x = {1.5f, -2.f, 0.f, 3.25f, -4.5f, 6.f};
  auto outputs = (*session)->run({{"x", loom::Tensor::from_vector(loom::DType::kFloat, {2, 3}, x)}});
  ASSERT_TRUE(outputs.has_value()) << outputs.status().message();
  ASSERT_EQ(outputs->size(), 1u);
  const loom::Tensor& y = (*outputs)[0];
  ASSERT_EQ(y.dtype(), loom::DType::kFloat);
  ASSERT_EQ(y.dims(), (loom::Dims{2, 3}));
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y.data_as<float>()[i], -x[i]) << "element " << i;
}

TEST(AbiPluginLoading, GoodPluginLoadsAndRunsACustomDomainKernel) {
  expect_loads_and_runs("good", abi_version(LOOM_ABI_VERSION_MAJOR, LOOM_ABI_VERSION_MINOR), LOOM_ABI_VERSION_MINOR);
}

// Built against the frozen 0.1 headers (tests/abi/abi_0_1), with a 0.1
// custom-op schema for its op: loads, runs, and its schema is read at the
// smaller size and enforced (arity).
TEST(AbiPluginLoading, PreviousMinorPluginLoadsRunsAndItsSchemaIsEnforced) {
  expect_loads_and_runs("older_minor", abi_version(LOOM_ABI_VERSION_MAJOR, 1), 1);
  auto env = environment_for("older_minor", loom::FallbackPolicy::kDeny);
  ASSERT_NE(env, nullptr);
  const loom::PluginReport* report = report_in(*env, "older_minor");
  ASSERT_NE(report, nullptr);
  ASSERT_EQ(report->custom_op_domains.size(), 1u);
  EXPECT_EQ(report->custom_op_domains[0].name, "test.abi");
  EXPECT_EQ(report->custom_op_domains[0].ops, std::vector<std::string>{"Negate"});
  EXPECT_TRUE(report->custom_op_domains[0].refusal.empty()) << report->custom_op_domains[0].refusal;
  onnx::ModelProto model;
  ASSERT_TRUE(model.ParseFromString(negate_model_bytes()));
  model.mutable_graph()->mutable_node(0)->add_input("x");  // Negate(x, x): the schema takes 1 input
  auto session = loom::Session::create_from_bytes(env, model.SerializeAsString());
  ASSERT_FALSE(session.has_value());
  EXPECT_NE(session.status().message().find("node 'negate' (test.abi.Negate): has 2 input(s), the schema takes 1"),
            std::string::npos)
      << session.status().message();
}

// The newer plugin's extra trailing slots abort() if called, so reaching the
// end of this test also proves the core never touched them.
TEST(AbiPluginLoading, NewerMinorPluginLoadsAndRunsWithoutItsExtraSlots) {
  expect_loads_and_runs("newer_minor", abi_version(LOOM_ABI_VERSION_MAJOR, LOOM_ABI_VERSION_MINOR + 1),
                        LOOM_ABI_VERSION_MINOR);
}

// test.custom.Scale(x) -> y, x float of `rank` dims of 2, output untyped.
std::string scale_model_bytes(int rank) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  for (auto [domain, version] : {std::pair{"", 17}, std::pair{"test.custom", 1}}) {
    auto* opset = model.add_opset_import();
    opset->set_domain(domain);
    opset->set_version(version);
  }
  onnx::GraphProto* graph = model.mutable_graph();
  graph->set_name("scale");
  onnx::NodeProto* node = graph->add_node();
  node->set_name("scale");
  node->set_op_type("Scale");
  node->set_domain("test.custom");
  node->add_input("x");
  node->add_output("y");
  auto* attr = node->add_attribute();
  attr->set_name("scale");
  attr->set_type(onnx::AttributeProto::FLOAT);
  attr->set_f(2.0f);
  auto* x = graph->add_input();
  x->set_name("x");
  auto* tensor_type = x->mutable_type()->mutable_tensor_type();
  tensor_type->set_elem_type(onnx::TensorProto::FLOAT);
  for (int i = 0; i < rank; ++i) tensor_type->mutable_shape()->add_dim()->set_dim_value(2);
  graph->add_output()->set_name("y");
  return model.SerializeAsString();
}

// A raw C plugin's shape inference types the custom op's output at load;
// its error refuses the model, naming the node and the plugin's message.
TEST(AbiPluginLoading, CustomOpShapeInferenceTypesOutputsAndItsErrorsRefuseTheModel) {
  auto env = environment_for("custom_ops", loom::FallbackPolicy::kDeny);
  ASSERT_NE(env, nullptr);
  auto model = loom::onnxio::load_model_bytes(scale_model_bytes(2), "", "scale",
                                              loom::onnxio::LoadOptions{env->registry().op_schemas()});
  ASSERT_TRUE(model.has_value()) << model.status().message();
  const loom::ir::ValueType* y = model->graph->type_of("y");
  ASSERT_NE(y, nullptr);
  EXPECT_EQ(y->dtype, loom::DType::kFloat);
  ASSERT_TRUE(y->has_shape);
  EXPECT_EQ(y->dims.size(), 2u);
  auto refused = loom::Session::create_from_bytes(env, scale_model_bytes(5));
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.status().message().find(
                "node 'scale' (test.custom.Scale): shape inference failed: Scale supports inputs of rank <= 4"),
            std::string::npos)
      << refused.status().message();
}

// A custom-op kernel for one named provider runs on that EP, and no other
// EP is given it.
TEST(AbiPluginLoading, CustomOpKernelForANamedProviderRunsOnlyThere) {
  auto env = environment_for("custom_ops", loom::FallbackPolicy::kDeny);
  ASSERT_NE(env, nullptr);
  auto session = loom::Session::create_from_bytes(env, scale_model_bytes(2));
  ASSERT_TRUE(session.has_value()) << session.status().message();
  EXPECT_EQ((*session)->placement().nodes[0].provider, kProvider);
  auto out = (*session)->run({{"x", loom::Tensor::from_vector(loom::DType::kFloat, {2, 2}, std::vector<float>{1, -2, 3, 4})}});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  const float* y = (*out)[0].data_as<float>();
  EXPECT_EQ(std::vector<float>(y, y + 4), (std::vector<float>{2, -4, 6, 8}));

  loom::SessionOptions reference_only;
  reference_only.providers = {"reference"};
  loom::Config config;
  config.plugin_dirs = {case_dir("custom_ops")};
  config.fallback = loom::FallbackPolicy::kDeny;
  auto env2 = loom::Environment::create(config);
  ASSERT_TRUE(env2.has_value()) << env2.status().message();
  auto refused = loom::Session::create_from_bytes(*env2, scale_model_bytes(2), reference_only);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.status().message().find("reference: no kernel for test.custom.Scale"), std::string::npos)
      << refused.status().message();
}

// A requested provider whose only plugin was refused is an error under
// fallback "deny", and the error carries the refusal.
TEST(AbiPluginLoading, RequestedProviderFromRefusedPluginFailsUnderDeny) {
  auto env = environment_for("init_fails", loom::FallbackPolicy::kDeny);
  ASSERT_NE(env, nullptr);
  auto session = loom::Session::create_from_bytes(env, negate_model_bytes());
  ASSERT_FALSE(session.has_value());
  const std::string message = session.status().message();
  EXPECT_NE(message.find(kProvider), std::string::npos) << message;
  EXPECT_NE(message.find("init failed on purpose"), std::string::npos) << message;
}

}  // namespace
