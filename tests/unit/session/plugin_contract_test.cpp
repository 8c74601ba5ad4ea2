// The kernel contract the host enforces on third-party EPs: a value a step
// makes must have the element type and the shape (rank and fixed dims) its
// node's meaning gives it. A provider that breaks it fails the run with a
// message naming the provider, the node and both shapes or types, instead
// of passing wrong values to the next node (tests/plugins/test_contract_ep.cpp
// breaks it on demand).
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "common/model_builder.h"
#include "common/rss.h"
#include "common/test_env.h"

namespace loom {
namespace {

using testing::float_tensor;
using testing::values_of;

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

// x [d0, 3] -> Relu (test_contract) -> r -> Neg (reference) -> y
std::string relu_neg_model() {
  testing::ModelBuilder m;
  m.input("x", ::onnx::TensorProto::FLOAT, {-1, 3});
  m.node("Relu", {"x"}, {"r"}, "relu");
  m.node("Neg", {"r"}, {"y"}, "neg");
  m.output("y", ::onnx::TensorProto::FLOAT, {-1, 3});
  return m.bytes();
}

std::unique_ptr<Session> contract_session(const std::string& mode, const std::string& model) {
  Config c;
  c.providers = {"test_contract", "reference"};
  c.provider_options["test_contract"]["break"] = mode;
  auto env = testing::make_env(c, "contract");
  if (env == nullptr) return nullptr;
  auto s = Session::create_from_bytes(env, model);
  EXPECT_TRUE(s.has_value()) << s.status().message();
  if (!s.has_value()) return nullptr;
  for (const auto& n : (*s)->placement().nodes)
    EXPECT_EQ(n.provider, n.op_type == "Relu" ? "test_contract" : "reference") << n.node_name;
  return std::move(*s);
}

const Tensor kInput = float_tensor({2, 3}, {-1, 2, -3, 4, -5, 6});

TEST(PluginContractTest, KeptContractRunsAndMatchesTheReference) {
  auto s = contract_session("none", relu_neg_model());
  ASSERT_NE(s, nullptr);
  auto out = s->run({{"x", kInput}});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ((*out)[0].dims(), (Dims{2, 3}));
  EXPECT_EQ(values_of((*out)[0]), (std::vector<float>{0, -2, 0, -4, 0, -6}));
}

TEST(PluginContractTest, WrongShapeFailsTheRunNamingProviderNodeAndBothShapes) {
  auto s = contract_session("shape", relu_neg_model());
  ASSERT_NE(s, nullptr);
  auto out = s->run({{"x", kInput}});
  ASSERT_FALSE(out.has_value()) << "a [3,2] Relu output for a [2,3] input was accepted";
  const std::string m = out.status().message();
  EXPECT_TRUE(contains(m, "test_contract")) << m;
  EXPECT_TRUE(contains(m, "relu")) << m;
  EXPECT_TRUE(contains(m, "[3,2]")) << m;
  EXPECT_TRUE(contains(m, ",3]")) << "the expected shape (symbolic first dim, 3): " << m;
  EXPECT_FALSE(contains(m, "neg")) << "the next node is not blamed: " << m;
}

TEST(PluginContractTest, WrongRankFailsTheRun) {
  auto s = contract_session("rank", relu_neg_model());
  ASSERT_NE(s, nullptr);
  auto out = s->run({{"x", kInput}});
  ASSERT_FALSE(out.has_value()) << "a flat [6] Relu output for a [2,3] input was accepted";
  const std::string m = out.status().message();
  EXPECT_TRUE(contains(m, "test_contract")) << m;
  EXPECT_TRUE(contains(m, "relu")) << m;
  EXPECT_TRUE(contains(m, "[6]")) << m;
}

TEST(PluginContractTest, WrongElementTypeIsBlamedOnTheProviderThatMadeIt) {
  auto s = contract_session("dtype", relu_neg_model());
  ASSERT_NE(s, nullptr);
  auto out = s->run({{"x", kInput}});
  ASSERT_FALSE(out.has_value()) << "an int32 Relu output was accepted";
  const std::string m = out.status().message();
  EXPECT_TRUE(contains(m, "test_contract")) << m;
  EXPECT_TRUE(contains(m, "relu")) << m;
  EXPECT_TRUE(contains(m, "int32")) << m;
  EXPECT_TRUE(contains(m, "float")) << m;
  EXPECT_FALSE(contains(m, "neg")) << "the next node is not blamed: " << m;
}

// A graph output whose declared dims contradict what its node makes is the
// model's mistake, not the provider's: as in ONNX Runtime, the run goes on
// (with a warning in the log) and returns what the node made.
TEST(PluginContractTest, WrongDeclaredGraphOutputShapeOnlyWarns) {
  testing::ModelBuilder m;
  m.input("x", ::onnx::TensorProto::FLOAT, {2, 3});
  m.node("Relu", {"x"}, {"y"}, "relu");
  m.output("y", ::onnx::TensorProto::FLOAT, {3, 2});
  auto s = Session::create_from_bytes(testing::reference_env(), m.bytes());
  ASSERT_TRUE(s.has_value()) << s.status().message();
  for (int run = 0; run < 2; ++run) {
    auto out = (*s)->run({{"x", kInput}});
    ASSERT_TRUE(out.has_value()) << out.status().message();
    EXPECT_EQ((*out)[0].dims(), (Dims{2, 3}));
    EXPECT_EQ(values_of((*out)[0]), (std::vector<float>{0, 2, 0, 4, 0, 6}));
  }
}

// A wrong declaration for an intermediate value (as some exporters write
// traced static shapes into value_info) is the model's mistake, and so are
// the shapes inference derived from it downstream: the run goes on, as in
// ONNX Runtime, with the values the kernels made.
TEST(PluginContractTest, AWrongDeclarationAndWhatInferenceDerivesFromItOnlyWarn) {
  testing::ModelBuilder m;
  m.input("x", ::onnx::TensorProto::FLOAT, {2, 3});
  m.node("Relu", {"x"}, {"h"}, "relu");
  m.node("Neg", {"h"}, {"n"}, "neg");
  m.node("Abs", {"n"}, {"y"}, "abs");
  auto* h = m.proto().mutable_graph()->add_value_info();
  h->set_name("h");
  h->mutable_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::FLOAT);
  for (int64_t d : {3, 2}) h->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
  auto* y = m.proto().mutable_graph()->add_output();
  y->set_name("y");
  y->mutable_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::FLOAT);  // no shape: inferred
  auto s = Session::create_from_bytes(testing::reference_env(), m.bytes());
  ASSERT_TRUE(s.has_value()) << s.status().message();
  auto out = (*s)->run({{"x", kInput}});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ((*out)[0].dims(), (Dims{2, 3}));
  EXPECT_EQ(values_of((*out)[0]), (std::vector<float>{0, 2, 0, 4, 0, 6}));
}

// Copies go through a data transfer that says it can make them (can_copy):
// test_peer copies straight between its memory and test_device's, so a
// value crossing between the two does not stop in host memory; without the
// link it does; and a copy no provider makes fails session creation, naming
// the value, both memories and the provider.
// `fold`: false keeps nodes that only read constants from being folded away.
std::shared_ptr<Environment> peer_env(std::map<std::string, std::string> peer_options, bool fold = true) {
  Config c;
  if (!fold) c.optimization_level = OptimizationLevel::kDisabled;
  c.plugin_dirs = {testing::test_plugin_dir("device"), testing::test_plugin_dir("contract")};
  c.providers = {"test_device", "test_peer", "reference"};
  c.provider_options["test_peer"] = std::move(peer_options);
  return testing::make_env(c);
}

// x -> Relu (test_device) -> r -> Neg (test_peer) -> n -> Relu (test_device) -> y
std::string device_peer_device_model() {
  testing::ModelBuilder m;
  m.input("x", ::onnx::TensorProto::FLOAT, {4});
  m.node("Relu", {"x"}, {"r"}, "relu1");
  m.node("Neg", {"r"}, {"n"}, "neg");
  m.node("Relu", {"n"}, {"y"}, "relu2");
  m.output("y", ::onnx::TensorProto::FLOAT, {4});
  return m.bytes();
}

uint64_t peer_link_copies() {
  auto fn = testing::plugin_symbol<uint64_t (*)()>(testing::test_plugin_dir("contract") + "/libloom_test_contract_ep.so",
                                                   "loom_test_peer_link_copies");
  return fn != nullptr ? fn() : ~uint64_t{0};
}

void expect_device_peer_device_runs(Session& s) {
  for (const auto& n : s.placement().nodes)
    EXPECT_EQ(n.provider, n.op_type == "Neg" ? "test_peer" : "test_device") << n.node_name;
  auto out = s.run({{"x", float_tensor({4}, {-1, 2, -3, 4})}});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ(values_of((*out)[0]), (std::vector<float>{0, 0, 0, 0}));
}

TEST(PluginContractTest, PeerCopiesGoStraightBetweenDevicesWhenCanCopySaysSo) {
  auto env = peer_env({});
  ASSERT_NE(env, nullptr);
  auto s = Session::create_from_bytes(env, device_peer_device_model());
  ASSERT_TRUE(s.has_value()) << s.status().message();
  const std::string plan = (*s)->describe_plan();
  EXPECT_TRUE(contains(plan, "'r' from test_device to test_peer")) << plan;
  EXPECT_TRUE(contains(plan, "'n' from test_peer to test_device")) << plan;
  EXPECT_FALSE(contains(plan, "'r' from test_device to cpu")) << plan;
  const uint64_t before = peer_link_copies();
  expect_device_peer_device_runs(**s);
  EXPECT_EQ(peer_link_copies() - before, 2u);
}

TEST(PluginContractTest, DevicesWithoutALinkCopyThroughHostMemory) {
  auto env = peer_env({{"peer", "0"}});
  ASSERT_NE(env, nullptr);
  auto s = Session::create_from_bytes(env, device_peer_device_model());
  ASSERT_TRUE(s.has_value()) << s.status().message();
  const std::string plan = (*s)->describe_plan();
  EXPECT_TRUE(contains(plan, "'r' from test_device to cpu")) << plan;
  EXPECT_FALSE(contains(plan, "'r' from test_device to test_peer")) << plan;
  const uint64_t before = peer_link_copies();
  expect_device_peer_device_runs(**s);
  EXPECT_EQ(peer_link_copies() - before, 0u);
}

TEST(PluginContractTest, ACopyNoProviderMakesFailsSessionCreation) {
  testing::ModelBuilder m;
  m.input("x", ::onnx::TensorProto::FLOAT, {4});
  m.node("Neg", {"x"}, {"y"}, "neg");
  m.output("y", ::onnx::TensorProto::FLOAT, {4});
  auto env = peer_env({{"upload", "0"}});
  ASSERT_NE(env, nullptr);
  auto s = Session::create_from_bytes(env, m.bytes());
  ASSERT_FALSE(s.has_value()) << "planned a host-to-test_peer copy that test_peer's can_copy refuses";
  const std::string msg = s.status().message();
  EXPECT_TRUE(contains(msg, "'x'")) << msg;
  EXPECT_TRUE(contains(msg, "'cpu' to 'test_peer'")) << msg;
  EXPECT_TRUE(contains(msg, "provider 'test_peer'")) << msg;
  EXPECT_TRUE(contains(msg, "can_copy")) << msg;
}

// Once a constant is in a device EP's memory, the host's copy goes where
// the upload was its only reader: a device EP's weights are not held twice.
// A constant a host kernel also reads stays.
void add_half_filled(testing::ModelBuilder& m, const std::string& name, int64_t count) {
  auto* t = m.proto().mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(::onnx::TensorProto::FLOAT);
  t->add_dims(count);
  std::vector<float> values(static_cast<size_t>(count), 0.5f);
  t->set_raw_data(values.data(), values.size() * sizeof(float));
}

TEST(PluginContractTest, HostCopyOfAnUploadedConstantIsReleased) {
  constexpr int64_t kCount = int64_t{16} << 20;  // 64 MiB of float
  testing::ModelBuilder m;
  m.input("x", ::onnx::TensorProto::FLOAT, {1});
  add_half_filled(m, "w", kCount);
  m.node("ReduceSum", {"w"}, {"s"}, "sum");  // test_peer, reading w in its memory
  m.node("Add", {"x", "s"}, {"y"}, "add");   // reference
  m.output("y", ::onnx::TensorProto::FLOAT, {1});
  std::string model = m.bytes();
  m.proto().Clear();
  auto env = peer_env({}, false);
  ASSERT_NE(env, nullptr);
  auto s = Session::create_from_bytes(env, model);
  model.clear();
  model.shrink_to_fit();
  ASSERT_TRUE(s.has_value()) << s.status().message();
  for (const auto& n : (*s)->placement().nodes)
    EXPECT_EQ(n.provider, n.op_type == "ReduceSum" ? "test_peer" : "reference") << n.node_name;
  EXPECT_TRUE(contains((*s)->describe_plan(), "'w' from cpu to test_peer")) << (*s)->describe_plan();
  const int64_t before = testing::rss_bytes();
  for (int run = 0; run < 3; ++run) {
    auto out = (*s)->run({{"x", float_tensor({1}, {1})}});
    ASSERT_TRUE(out.has_value()) << "run " << run << ": " << out.status().message();
    EXPECT_EQ(values_of((*out)[0]), (std::vector<float>{1 + 0.5f * kCount})) << "run " << run;
  }
  const double grown_mb = static_cast<double>(testing::rss_bytes() - before) / (1 << 20);
  // The device copy adds 64 MiB; the host's copy going takes them back.
  // AddressSanitizer keeps freed memory in quarantine: no RSS drop to see.
  if (!testing::kAddressSanitizer) EXPECT_LT(grown_mb, 32.0) << "RSS grew " << grown_mb << " MiB over 3 runs";
}

// A device EP that packs a constant into its own copy and releases the
// input (kernel_release_constant_input) gets the session's device copy
// freed: the weights are not held by the device twice either.
int64_t in_use(const Session& s, const std::string& memory) {
  for (const MemoryStats& m : s.memory_stats())
    if (m.memory == memory) return m.in_use_bytes;
  return -1;
}

TEST(PluginContractTest, DeviceCopyOfAConstantItsReaderPackedIsFreed) {
  constexpr int64_t kCount = int64_t{1} << 20;  // 4 MiB of float
  for (const bool pack : {false, true}) {
    SCOPED_TRACE(pack ? "packing ReduceSum" : "plain ReduceSum");
    testing::ModelBuilder m;
    m.input("x", ::onnx::TensorProto::FLOAT, {1});
    add_half_filled(m, "w", kCount);
    m.node("ReduceSum", {"w"}, {"s"}, "sum");  // test_peer
    m.node("Add", {"x", "s"}, {"y"}, "add");   // reference
    m.output("y", ::onnx::TensorProto::FLOAT, {1});
    auto env = peer_env({{"pack", pack ? "1" : "0"}}, false);
    ASSERT_NE(env, nullptr);
    auto s = Session::create_from_bytes(env, m.bytes());
    ASSERT_TRUE(s.has_value()) << s.status().message();
    for (int run = 0; run < 3; ++run) {
      auto out = (*s)->run({{"x", float_tensor({1}, {1})}});
      ASSERT_TRUE(out.has_value()) << "run " << run << ": " << out.status().message();
      EXPECT_EQ(values_of((*out)[0]), (std::vector<float>{1 + 0.5f * kCount})) << "run " << run;
      const int64_t held = in_use(**s, "test_peer");
      if (pack) EXPECT_LT(held, kCount * 4) << "run " << run << ": the device copy is still held";
      else EXPECT_GE(held, kCount * 4) << "run " << run << ": the device copy is the kernel's input";
    }
  }
}

TEST(PluginContractTest, UploadedConstantAHostKernelAlsoReadsIsKept) {
  testing::ModelBuilder m;
  m.input("x", ::onnx::TensorProto::FLOAT, {1});
  add_half_filled(m, "w", 1024);
  m.node("ReduceSum", {"w"}, {"s"}, "sum");       // test_peer
  m.node("ReduceMax", {"w"}, {"mx"}, "max");      // reference, on the host's copy
  m.node("Add", {"s", "mx"}, {"sm"}, "add1");     // reference
  m.node("Add", {"x", "sm"}, {"y"}, "add2");      // reference
  m.output("y", ::onnx::TensorProto::FLOAT, {1});
  auto env = peer_env({}, false);
  ASSERT_NE(env, nullptr);
  auto s = Session::create_from_bytes(env, m.bytes());
  ASSERT_TRUE(s.has_value()) << s.status().message();
  EXPECT_TRUE(contains((*s)->describe_plan(), "'w' from cpu to test_peer")) << (*s)->describe_plan();
  for (int run = 0; run < 2; ++run) {
    auto out = (*s)->run({{"x", float_tensor({1}, {1})}});
    ASSERT_TRUE(out.has_value()) << "run " << run << ": " << out.status().message();
    EXPECT_EQ(values_of((*out)[0]), (std::vector<float>{1 + 512 + 0.5f})) << "run " << run;
  }
}

}  // namespace
}  // namespace loom
