// Copies between memory kinds, proven with the test_device EP whose kernels
// refuse inputs outside its own (non-host-accessible) memory.
#include <gtest/gtest.h>

#include "common/model_builder.h"
#include "common/test_env.h"

namespace loom {
namespace {

using testing::float_tensor;
using testing::values_of;

// x -> Relu (device) -> Add bias (reference, host) -> Mul by itself (device) -> z
std::string mixed_model() {
  testing::ModelBuilder m;
  m.input("x", ::onnx::TensorProto::FLOAT, {2, 3});
  m.float_initializer("bias", {2, 3}, {1, -1, 2, -2, 3, -3});
  m.node("Relu", {"x"}, {"r"}, "relu");
  m.node("Add", {"r", "bias"}, {"a"}, "add");
  m.node("Mul", {"a", "a"}, {"z"}, "mul");
  m.output("z", ::onnx::TensorProto::FLOAT, {2, 3});
  return m.bytes();
}

std::vector<float> expected(const std::vector<float>& x) {
  const float bias[] = {1, -1, 2, -2, 3, -3};
  std::vector<float> z;
  for (size_t i = 0; i < x.size(); ++i) {
    const float a = std::max(x[i], 0.0f) + bias[i];
    z.push_back(a * a);
  }
  return z;
}

TEST(CopyInsertionTest, ValuesCrossingMemoryKindsAreCopiedBothWays) {
  Config config;
  config.providers = {"test_device", "reference"};
  auto env = testing::make_env(config, "device");
  ASSERT_TRUE(env);
  auto session = Session::create_from_bytes(env, mixed_model());
  ASSERT_TRUE(session.has_value()) << session.status().message();

  const PlacementReport& p = (*session)->placement();
  ASSERT_EQ(p.nodes.size(), 3u);
  EXPECT_EQ(p.nodes[0].provider, "test_device");
  EXPECT_EQ(p.nodes[1].provider, "reference");
  EXPECT_EQ(p.nodes[2].provider, "test_device");

  const std::string plan = (*session)->describe_plan();
  // x to device; r back to host; a to device once (Mul reads it twice); z to host.
  size_t copies = 0;
  for (size_t pos = plan.find("copy "); pos != std::string::npos; pos = plan.find("copy ", pos + 1)) ++copies;
  EXPECT_EQ(copies, 4u) << plan;

  std::string lib = testing::test_plugin_dir("device") + "/libloom_test_device_ep.so";
  auto copies_done = testing::plugin_symbol<uint64_t (*)()>(lib, "loom_test_device_copies");
  ASSERT_NE(copies_done, nullptr);
  const uint64_t before = copies_done();
  std::vector<float> x = {-1, 0.5f, 2, -3, 4, 0};
  auto out = (*session)->run({{"x", float_tensor({2, 3}, x)}});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ(copies_done() - before, 4u);
  EXPECT_EQ(values_of((*out)[0]), expected(x));
}

TEST(CopyInsertionTest, NoCopiesWhenEverythingStaysOnHost) {
  Config config;
  config.providers = {"reference"};
  auto env = testing::make_env(config, "device");
  auto session = Session::create_from_bytes(env, mixed_model());
  ASSERT_TRUE(session.has_value()) << session.status().message();
  EXPECT_EQ((*session)->describe_plan().find("copy "), std::string::npos);
  std::vector<float> x = {-1, 0.5f, 2, -3, 4, 0};
  auto out = (*session)->run({{"x", float_tensor({2, 3}, x)}});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ(values_of((*out)[0]), expected(x));
}

TEST(CopyInsertionTest, DeviceBuffersAreAllFreedAfterRuns) {
  Config config;
  config.providers = {"test_device", "reference"};
  auto env = testing::make_env(config, "device");
  std::string lib = testing::test_plugin_dir("device") + "/libloom_test_device_ep.so";
  auto live = testing::plugin_symbol<uint64_t (*)()>(lib, "loom_test_device_live_allocations");
  ASSERT_NE(live, nullptr);
  const uint64_t before = live();
  {
    auto session = Session::create_from_bytes(env, mixed_model());
    ASSERT_TRUE(session.has_value()) << session.status().message();
    for (int i = 0; i < 5; ++i) ASSERT_TRUE((*session)->run({{"x", float_tensor({2, 3}, {1, 2, 3, 4, 5, 6})}}).has_value());
  }
  EXPECT_EQ(live(), before);
}

}  // namespace
}  // namespace loom
