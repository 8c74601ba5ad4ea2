// Streams and events, proven with the test_async EPs (tests/plugins): their
// kernels queue work on a worker thread that runs it ~200 us later, so a
// missing event, a host read before the stream got there or a buffer reused
// too early gives wrong numbers, and the counters show where the host waited.
#include <gtest/gtest.h>

#include <thread>

#include "common/model_builder.h"
#include "common/test_env.h"

namespace loom {
namespace {

using testing::float_tensor;
using testing::values_of;

struct AsyncCounters {
  uint64_t (*launched_early)() = nullptr;
  uint64_t (*stream_host_syncs)() = nullptr;
  uint64_t (*event_host_syncs)() = nullptr;
  uint64_t (*event_stream_waits)() = nullptr;
  uint64_t (*copies)() = nullptr;
  uint64_t (*live_allocations)() = nullptr;
  int (*live_streams)() = nullptr;
};

AsyncCounters counters() {
  const std::string lib = testing::test_plugin_dir("async") + "/libloom_test_async_ep.so";
  AsyncCounters c;
  c.launched_early = testing::plugin_symbol<uint64_t (*)()>(lib, "loom_test_async_launched_early");
  c.stream_host_syncs = testing::plugin_symbol<uint64_t (*)()>(lib, "loom_test_async_stream_host_syncs");
  c.event_host_syncs = testing::plugin_symbol<uint64_t (*)()>(lib, "loom_test_async_event_host_syncs");
  c.event_stream_waits = testing::plugin_symbol<uint64_t (*)()>(lib, "loom_test_async_event_stream_waits");
  c.copies = testing::plugin_symbol<uint64_t (*)()>(lib, "loom_test_async_copies");
  c.live_allocations = testing::plugin_symbol<uint64_t (*)()>(lib, "loom_test_async_live_allocations");
  c.live_streams = testing::plugin_symbol<int (*)()>(lib, "loom_test_async_live_streams");
  return c;
}

std::shared_ptr<Environment> async_env(std::vector<std::string> providers) {
  Config config;
  config.providers = std::move(providers);
  config.optimization_level = OptimizationLevel::kDisabled;
  return testing::make_env(config, "async");
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

// x -> Relu (async) -> Sigmoid (reference, host) -> Mul with the Relu (async)
//   -> Add bias (async) -> y.
std::string mixed_model() {
  testing::ModelBuilder m;
  m.input("x", ::onnx::TensorProto::FLOAT, {4, 256});
  std::vector<float> bias(4 * 256);
  for (size_t i = 0; i < bias.size(); ++i) bias[i] = 0.01f * static_cast<float>(i % 37) - 0.2f;
  m.float_initializer("bias", {4, 256}, bias);
  m.node("Relu", {"x"}, {"r"}, "relu");
  m.node("Sigmoid", {"r"}, {"s"}, "sigmoid");
  m.node("Mul", {"s", "r"}, {"m"}, "mul");
  m.node("Add", {"m", "bias"}, {"y"}, "add");
  m.output("y", ::onnx::TensorProto::FLOAT, {4, 256});
  return m.bytes();
}

// Relu -> Mul -> Add -> Relu, all on the asynchronous device.
std::string device_chain_model() {
  testing::ModelBuilder m;
  m.input("x", ::onnx::TensorProto::FLOAT, {4, 256});
  m.node("Relu", {"x"}, {"a"}, "relu1");
  m.node("Mul", {"a", "x"}, {"b"}, "mul");
  m.node("Add", {"b", "a"}, {"c"}, "add");
  m.node("Relu", {"c"}, {"y"}, "relu2");
  m.output("y", ::onnx::TensorProto::FLOAT, {4, 256});
  return m.bytes();
}

Tensor input(float phase) {
  std::vector<float> x(4 * 256);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((static_cast<int>(i) * 7 + 3) % 23) * 0.1f - 1.1f + phase;
  return float_tensor({4, 256}, x);
}

std::vector<float> run_once(const Session& s, const Tensor& x) {
  auto out = s.run({{"x", x}});
  EXPECT_TRUE(out.has_value()) << out.status().message();
  return out.has_value() ? values_of((*out)[0]) : std::vector<float>{};
}

TEST(AsyncStreamTest, MixedHostAndAsyncDeviceMatchesReference) {
  auto env = async_env({"test_async", "reference"});
  auto reference = Session::create_from_bytes(testing::reference_env(), mixed_model());
  auto session = Session::create_from_bytes(env, mixed_model());
  ASSERT_TRUE(reference.has_value()) << reference.status().message();
  ASSERT_TRUE(session.has_value()) << session.status().message();
  const PlacementReport& p = (*session)->placement();
  ASSERT_EQ(p.nodes.size(), 4u);
  EXPECT_EQ(p.nodes[0].provider, "test_async");
  EXPECT_EQ(p.nodes[1].provider, "reference");

  // x to the device; r back to the host, which waits for it once; s and the
  // bias to the device (no wait: the host made them); y back; one barrier.
  const std::string plan = (*session)->describe_plan();
  EXPECT_NE(plan.find("[1] test_async (asynchronous)"), std::string::npos) << plan;
  EXPECT_EQ(count(plan, "copy "), 5u) << plan;
  EXPECT_EQ(count(plan, "record event"), 1u) << plan;
  EXPECT_EQ(count(plan, "host waits for event"), 1u) << plan;
  EXPECT_EQ(count(plan, "[1] wait for"), 0u) << plan;
  EXPECT_EQ(count(plan, "barrier"), 1u) << plan;

  AsyncCounters c = counters();
  ASSERT_NE(c.launched_early, nullptr);
  for (int i = 0; i < 5; ++i) {
    const Tensor x = input(0.05f * static_cast<float>(i));
    const uint64_t early = c.launched_early(), event_syncs = c.event_host_syncs(),
                   stream_syncs = c.stream_host_syncs(), copies = c.copies();
    const std::vector<float> got = run_once(**session, x);
    EXPECT_EQ(got, run_once(**reference, x)) << "run " << i;
    // Relu, Mul and Add each returned before the device ran them.
    EXPECT_EQ(c.launched_early() - early, 3u);
    EXPECT_EQ(c.event_host_syncs() - event_syncs, 1u);
    EXPECT_EQ(c.stream_host_syncs() - stream_syncs, 1u);
    // The bias goes to the device once per session, in the first run.
    EXPECT_EQ(c.copies() - copies, i == 0 ? 5u : 4u);
  }
}

TEST(AsyncStreamTest, DeviceChainRunsWithoutHostWaitsBetweenNodes) {
  auto env = async_env({"test_async", "reference"});
  auto session = Session::create_from_bytes(env, device_chain_model());
  auto reference = Session::create_from_bytes(testing::reference_env(), device_chain_model());
  ASSERT_TRUE(session.has_value()) << session.status().message();
  ASSERT_TRUE(reference.has_value()) << reference.status().message();
  const std::string plan = (*session)->describe_plan();
  EXPECT_EQ(count(plan, "wait"), 1u) << plan;  // only the barrier's "wait for every stream"
  EXPECT_EQ(count(plan, "record"), 0u) << plan;
  AsyncCounters c = counters();
  ASSERT_NE(c.launched_early, nullptr);
  const uint64_t early = c.launched_early(), event_syncs = c.event_host_syncs(), stream_syncs = c.stream_host_syncs();
  const Tensor x = input(0.3f);
  EXPECT_EQ(run_once(**session, x), run_once(**reference, x));
  EXPECT_EQ(c.launched_early() - early, 4u);
  EXPECT_EQ(c.event_host_syncs() - event_syncs, 0u);
  EXPECT_EQ(c.stream_host_syncs() - stream_syncs, 1u);
}

// Relu on one asynchronous host-memory worker feeds Mul on another: the
// second stream waits on the first's event without the host blocking, and
// Sigmoid's output (host memory read on a stream) is not reused too early.
TEST(AsyncStreamTest, StreamWaitsOnAnotherStreamWithoutHost) {
  testing::ModelBuilder m;
  m.input("x", ::onnx::TensorProto::FLOAT, {4, 256});
  m.node("Sigmoid", {"x"}, {"s"}, "sigmoid");  // reference (host)
  m.node("Relu", {"s"}, {"r"}, "relu");        // test_async_host
  m.node("Mul", {"r", "x"}, {"y"}, "mul");     // test_async_host_b
  m.output("y", ::onnx::TensorProto::FLOAT, {4, 256});
  Config config;
  config.providers = {"test_async_host", "test_async_host_b", "reference"};
  config.provider_options["test_async_host"] = {{"ops", "Relu"}};
  config.provider_options["test_async_host_b"] = {{"ops", "Mul"}};
  config.optimization_level = OptimizationLevel::kDisabled;
  auto session = Session::create_from_bytes(testing::make_env(config, "async"), m.bytes());
  auto reference = Session::create_from_bytes(testing::reference_env(), m.bytes());
  ASSERT_TRUE(session.has_value()) << session.status().message();
  ASSERT_TRUE(reference.has_value()) << reference.status().message();
  const std::string plan = (*session)->describe_plan();
  EXPECT_EQ(count(plan, "[2] wait for event"), 1u) << plan;
  EXPECT_EQ(count(plan, "host waits"), 0u) << plan;
  AsyncCounters c = counters();
  ASSERT_NE(c.event_stream_waits, nullptr);
  for (int i = 0; i < 5; ++i) {
    const uint64_t stream_waits = c.event_stream_waits(), host_syncs = c.event_host_syncs();
    const Tensor x = input(0.1f * static_cast<float>(i));
    EXPECT_EQ(run_once(**session, x), run_once(**reference, x)) << plan;
    EXPECT_EQ(c.event_stream_waits() - stream_waits, 1u);
    EXPECT_EQ(c.event_host_syncs() - host_syncs, 0u);
  }
}

// Shape operands stay on the host (LOOM_KernelDef.host_inputs /
// host_outputs): Shape on the device writes its dims on the host, the host
// computes the new shape from them without waiting for the device, and
// Reshape on the device reads that shape (and a constant one) on the host:
// no copies but the input's and the output's, no event.
TEST(AsyncStreamTest, ShapeOperandsStayOnTheHost) {
  testing::ModelBuilder m;
  m.input("x", ::onnx::TensorProto::FLOAT, {4, 256});
  m.int64_initializer("scale", {2}, {1, 2});
  m.int64_initializer("halve", {2}, {2, 1});
  m.int64_initializer("flat", {2}, {1, 1024});
  m.node("Relu", {"x"}, {"r"}, "relu");                 // test_async
  m.node("Shape", {"r"}, {"s"}, "shape");               // test_async, dims on the host
  m.node("Mul", {"s", "scale"}, {"s2"}, "mul_shape");   // reference: [4, 512]
  m.node("Div", {"s2", "halve"}, {"s3"}, "div_shape");  // reference: [2, 512]
  m.node("Reshape", {"r", "s3"}, {"a"}, "reshape");     // test_async, computed shape
  m.node("Reshape", {"a", "flat"}, {"b"}, "flatten");   // test_async, constant shape
  m.node("Relu", {"b"}, {"y"}, "relu2");
  m.output("y", ::onnx::TensorProto::FLOAT, {1, 1024});
  m.output("s", ::onnx::TensorProto::INT64, {2});
  auto session = Session::create_from_bytes(async_env({"test_async", "reference"}), m.bytes());
  auto reference = Session::create_from_bytes(testing::reference_env(), m.bytes());
  ASSERT_TRUE(session.has_value()) << session.status().message();
  ASSERT_TRUE(reference.has_value()) << reference.status().message();
  for (const auto& n : (*session)->placement().nodes)
    EXPECT_EQ(n.provider, n.node_name == "mul_shape" || n.node_name == "div_shape" ? "reference" : "test_async")
        << n.node_name;
  const std::string plan = (*session)->describe_plan();
  EXPECT_EQ(count(plan, "copy "), 2u) << plan;  // x in, y out
  EXPECT_EQ(count(plan, "record event"), 0u) << plan;
  EXPECT_EQ(count(plan, "host waits for event"), 0u) << plan;
  AsyncCounters c = counters();
  ASSERT_NE(c.event_host_syncs, nullptr);
  for (int i = 0; i < 3; ++i) {
    const Tensor x = input(0.1f * static_cast<float>(i));
    const uint64_t event_syncs = c.event_host_syncs();
    auto got = (*session)->run({{"x", x}});
    auto want = (*reference)->run({{"x", x}});
    ASSERT_TRUE(got.has_value()) << got.status().message();
    ASSERT_TRUE(want.has_value()) << want.status().message();
    EXPECT_EQ((*got)[0].dims(), (std::vector<int64_t>{1, 1024}));
    EXPECT_EQ(values_of((*got)[0]), values_of((*want)[0]));
    EXPECT_EQ(testing::int64_values_of((*got)[1]), (std::vector<int64_t>{4, 256}));
    EXPECT_EQ(c.event_host_syncs() - event_syncs, 0u);
  }
}

TEST(AsyncStreamTest, ConcurrentRunsAreBitIdenticalAndReleaseEverything) {
  auto env = async_env({"test_async", "reference"});
  AsyncCounters c = counters();  // the environment loaded the plugin
  ASSERT_NE(c.live_streams, nullptr);
  {
    auto session = Session::create_from_bytes(env, mixed_model());
    ASSERT_TRUE(session.has_value()) << session.status().message();
    const Tensor x = input(0.2f);
    const std::vector<float> expected = run_once(**session, x);
    std::atomic<int> mismatches{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t)
      threads.emplace_back([&] {
        for (int i = 0; i < 20; ++i)
          if (run_once(**session, x) != expected) ++mismatches;
      });
    for (auto& t : threads) t.join();
    EXPECT_EQ(mismatches.load(), 0);
  }
  EXPECT_EQ(c.live_allocations(), 0u);
  EXPECT_EQ(c.live_streams(), 0);
}

}  // namespace
}  // namespace loom
