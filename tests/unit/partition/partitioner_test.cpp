// Partitioning through the public API: priority order, fallback policies,
// fused claims and the cycle check, and the placement report's reasons.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "common/model_builder.h"
#include "common/test_env.h"

namespace loom {
namespace {

using testing::float_tensor;
using testing::values_of;

// x -> Relu -> Add(y) -> out
std::string relu_add_model() {
  testing::ModelBuilder m;
  m.input("x", ::onnx::TensorProto::FLOAT, {4});
  m.input("y", ::onnx::TensorProto::FLOAT, {4});
  m.node("Relu", {"x"}, {"r"}, "relu");
  m.node("Add", {"r", "y"}, {"out"}, "add");
  m.output("out", ::onnx::TensorProto::FLOAT, {4});
  return m.bytes();
}

std::shared_ptr<Environment> env_with(std::vector<std::string> providers, FallbackPolicy policy) {
  Config c;
  c.providers = std::move(providers);
  c.fallback = policy;
  return testing::make_env(c, "device");
}

TEST(PartitionerTest, EarlierProviderWinsWhatItCanRun) {
  auto s = Session::create_from_bytes(env_with({"test_device", "reference"}, FallbackPolicy::kAllow), relu_add_model());
  ASSERT_TRUE(s.has_value()) << s.status().message();
  const auto& nodes = (*s)->placement().nodes;
  EXPECT_EQ(nodes[0].provider, "test_device");
  EXPECT_EQ(nodes[1].provider, "reference");
  EXPECT_NE(nodes[1].reason.find("Add"), std::string::npos);
}

TEST(PartitionerTest, PriorityOrderIsRespected) {
  auto s = Session::create_from_bytes(env_with({"reference", "test_device"}, FallbackPolicy::kAllow), relu_add_model());
  ASSERT_TRUE(s.has_value()) << s.status().message();
  for (const auto& n : (*s)->placement().nodes) EXPECT_EQ(n.provider, "reference");
  ASSERT_EQ((*s)->placement().providers.size(), 1u);
  EXPECT_EQ((*s)->placement().providers[0].node_count, 2);
}

TEST(PartitionerTest, FallbackAllowSendsUnclaimedNodesToReference) {
  auto s = Session::create_from_bytes(env_with({"test_device"}, FallbackPolicy::kAllow), relu_add_model());
  ASSERT_TRUE(s.has_value()) << s.status().message();
  EXPECT_EQ((*s)->placement().nodes[1].provider, "reference");
  EXPECT_NE((*s)->placement().nodes[1].reason.find("fallback"), std::string::npos);
  auto out = (*s)->run({{"x", float_tensor({4}, {-1, 2, -3, 4})}, {"y", float_tensor({4}, {1, 1, 1, 1})}});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ(values_of((*out)[0]), (std::vector<float>{1, 3, 1, 5}));
}

TEST(PartitionerTest, FallbackDenyFailsNamingNodeOpAndWhatEachProviderSaid) {
  auto s = Session::create_from_bytes(env_with({"test_device"}, FallbackPolicy::kDeny), relu_add_model());
  ASSERT_FALSE(s.has_value());
  const std::string m = s.status().message();
  EXPECT_NE(m.find("'add'"), std::string::npos) << m;
  EXPECT_NE(m.find("Add"), std::string::npos) << m;
  EXPECT_NE(m.find("test_device: no kernel for Add"), std::string::npos) << m;
  EXPECT_NE(m.find("deny"), std::string::npos) << m;
}

TEST(PartitionerTest, FusedClaimRunsAsOneCompiledPartition) {
  auto env = env_with({"test_fused", "reference"}, FallbackPolicy::kAllow);
  auto s = Session::create_from_bytes(env, relu_add_model());
  ASSERT_TRUE(s.has_value()) << s.status().message();
  for (const auto& n : (*s)->placement().nodes) EXPECT_EQ(n.provider, "test_fused");
  EXPECT_NE((*s)->describe_plan().find("launch partition"), std::string::npos);
  auto runs = testing::plugin_symbol<uint64_t (*)()>(testing::test_plugin_dir("device") + "/libloom_test_device_ep.so",
                                                      "loom_test_fused_partition_runs");
  ASSERT_NE(runs, nullptr);
  const uint64_t before = runs();
  auto out = (*s)->run({{"x", float_tensor({4}, {-1, 2, -3, 4})}, {"y", float_tensor({4}, {1, 1, 1, 1})}});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ(values_of((*out)[0]), (std::vector<float>{1, 3, 1, 5}));
  EXPECT_EQ(runs() - before, 1u);
}

TEST(PartitionerTest, NonConvexFusedClaimIsSplitIntoConvexParts) {
  // Add -> Sigmoid -> Relu: fusing {Add, Relu} without Sigmoid would make the
  // partition both feed and consume Sigmoid, so the claim runs as two
  // partitions of test_fused around the Sigmoid (it used to be dropped whole).
  testing::ModelBuilder m;
  m.input("x", ::onnx::TensorProto::FLOAT, {4});
  m.node("Add", {"x", "x"}, {"a"}, "add");
  m.node("Sigmoid", {"a"}, {"s"}, "sigmoid");
  m.node("Relu", {"s"}, {"out"}, "relu");
  m.output("out", ::onnx::TensorProto::FLOAT, {4});
  auto s = Session::create_from_bytes(env_with({"test_fused", "reference"}, FallbackPolicy::kAllow), m.bytes());
  ASSERT_TRUE(s.has_value()) << s.status().message();
  std::map<std::string, std::string> provider, reason;
  for (const auto& n : (*s)->placement().nodes) {
    provider[n.node_name] = n.provider;
    reason[n.node_name] = n.reason;
  }
  EXPECT_EQ(provider["add"], "test_fused");
  EXPECT_EQ(provider["relu"], "test_fused");
  EXPECT_EQ(provider["sigmoid"], "reference");
  EXPECT_NE(reason["add"].find("split in 2"), std::string::npos) << reason["add"];
  const std::string plan = (*s)->describe_plan();
  size_t launches = 0;
  for (size_t at = plan.find("launch partition"); at != std::string::npos; at = plan.find("launch partition", at + 1))
    ++launches;
  EXPECT_EQ(launches, 2u) << plan;
  auto out = (*s)->run({{"x", float_tensor({4}, {0, 1, -1, 2})}});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  const std::vector<float> y = values_of((*out)[0]);
  const std::vector<float> x = {0, 1, -1, 2};
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(y[i], 1 / (1 + std::exp(-2 * x[i])), 1e-6) << i;
}

TEST(PartitionerTest, UnknownProviderIsAnErrorUnderDenyAndAWarningOtherwise) {
  auto deny = Session::create_from_bytes(env_with({"no_such_ep", "reference"}, FallbackPolicy::kDeny), relu_add_model());
  ASSERT_FALSE(deny.has_value());
  EXPECT_NE(deny.status().message().find("no_such_ep"), std::string::npos);
  EXPECT_NE(deny.status().message().find("reference"), std::string::npos);  // lists what is available
  auto allow = Session::create_from_bytes(env_with({"no_such_ep", "reference"}, FallbackPolicy::kAllow), relu_add_model());
  EXPECT_TRUE(allow.has_value()) << allow.status().message();
}

}  // namespace
}  // namespace loom
