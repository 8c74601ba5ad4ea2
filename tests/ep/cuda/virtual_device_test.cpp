// Placement against the cuda EP on any machine: the provider option
// virtual_device offers a device to partition against where no GPU is
// (on a GPU machine the real device is used and the same placement must
// come out). Shape arithmetic stays on the host; Shape writes its dims on
// the host and Reshape reads its shape there, so no shape crosses to the
// device. No GPU needed.
#include <gtest/gtest.h>

#include "ep_options.h"

#include <algorithm>

#include "ep/cuda/cuda_compare.h"

namespace loom {
namespace {

using namespace cuda_testing;

std::shared_ptr<Environment> virtual_env(std::map<std::string, std::string> extra = {}) {
  Config c;
  c.providers = {"cuda", "reference"};
  c.fallback = FallbackPolicy::kAllow;
  c.optimization_level = OptimizationLevel::kDisabled;
  c.provider_options["cuda"] = {{"virtual_device", "1"}};
  for (auto& [k, v] : extra) c.provider_options["cuda"][k] = v;
  return testing::make_env(c);
}

// x -> Relu -> r; Shape(r)[0] -> Unsqueeze -> Concat with [-1] -> Reshape(r).
std::string shape_chain_model() {
  testing::ModelBuilder m;
  m.input("x", kFloat, {2, 3, 4, 5});
  m.int64_initializer("zero", {}, {0});
  m.int64_initializer("axes", {1}, {0});
  m.int64_initializer("minus_one", {1}, {-1});
  m.node("Relu", {"x"}, {"r"}, "relu");
  m.node("Shape", {"r"}, {"s"}, "shape");
  testing::add_int_attr(m.node("Gather", {"s", "zero"}, {"n"}, "gather"), "axis", 0);
  m.node("Unsqueeze", {"n", "axes"}, {"n1"}, "unsqueeze");
  testing::add_int_attr(m.node("Concat", {"n1", "minus_one"}, {"target"}, "concat"), "axis", 0);
  m.node("Reshape", {"r", "target"}, {"y"}, "reshape");
  m.output("y", kFloat, {2, 60});
  return m.bytes();
}

TEST(CudaVirtualDevice, IsOfferedAndPlacesShapeArithmeticOnTheHost) {
  auto env = virtual_env();
  ASSERT_TRUE(env);
  const auto providers = env->available_providers();
  ASSERT_NE(std::find(providers.begin(), providers.end(), "cuda"), providers.end())
      << "cuda not offered: " << no_device_reason(*env);
  auto s = Session::create_from_bytes(env, shape_chain_model());
  ASSERT_TRUE(s.has_value()) << s.status().message();
  for (const auto& n : (*s)->placement().nodes) {
    const bool host = n.node_name == "gather" || n.node_name == "unsqueeze" || n.node_name == "concat";
    EXPECT_EQ(n.provider, host ? "reference" : "cuda") << n.node_name << ": " << n.reason;
    if (host) EXPECT_NE(n.reason.find("shape arithmetic"), std::string::npos) << n.node_name << ": " << n.reason;
  }
  // The shape is made and read on the host: it never goes to the device.
  const std::string plan = (*s)->describe_plan();
  EXPECT_EQ(plan.find("'target' from cpu"), std::string::npos) << plan;
  EXPECT_EQ(plan.find("'s' from cuda"), std::string::npos) << plan;

  const Tensor x = random_tensor(DType::kFloat, {2, 3, 4, 5}, 1);
  auto out = (*s)->run({{"x", x}});
  if (!no_device_reason(*cuda_env()).empty()) {
    // Virtual: partitioned, not run.
    ASSERT_FALSE(out.has_value());
    EXPECT_NE(out.status().message().find("virtual device"), std::string::npos) << out.status().message();
  } else {
    ASSERT_TRUE(out.has_value()) << out.status().message();
    auto ref = make_session(reference_env(), shape_chain_model());
    ASSERT_TRUE(ref);
    auto want = ref->run({{"x", x}});
    ASSERT_TRUE(want.has_value());
    expect_close((*want)[0], (*out)[0], {}, "shape chain");
  }
}

// RMSNormalization-23 runs on cuda when its scale has the normalized dims'
// shape, and is left to the host, with the reason, when it broadcasts.
TEST(CudaVirtualDevice, RmsNormalizationIsClaimedWhenItsScaleFits) {
  auto env = virtual_env();
  ASSERT_TRUE(env);
  for (const bool broadcast : {false, true}) {
    testing::ModelBuilder m(23);
    m.input("x", kFloat, {2, 8, 16});
    m.input("scale", kFloat, broadcast ? std::vector<int64_t>{1, 16} : std::vector<int64_t>{8, 16});
    auto& n = m.node("RMSNormalization", {"x", "scale"}, {"y"}, "rms");
    testing::add_int_attr(n, "axis", 1);
    m.output("y", kFloat, {2, 8, 16});
    auto s = Session::create_from_bytes(env, m.bytes());
    ASSERT_TRUE(s.has_value()) << s.status().message();
    ASSERT_EQ((*s)->placement().nodes.size(), 1u);
    const auto& placed = (*s)->placement().nodes[0];
    EXPECT_EQ(placed.provider, broadcast ? "reference" : "cuda") << placed.reason;
    if (broadcast) EXPECT_NE(placed.reason.find("broadcast scale"), std::string::npos) << placed.reason;
  }
}

TEST(CudaVirtualDevice, UnknownOptionIsNamed) {
  auto env = virtual_env({{"no_such_option", "1"}});
  ASSERT_TRUE(env);
  const std::string reason = no_device_reason(*env);
  EXPECT_NE(reason.find("unknown option 'no_such_option'"), std::string::npos) << reason;
}

TEST(CudaVirtualDevice, Fp16PrecisionIsAnOption) {
  auto env = virtual_env({{"precision", "fp16"}});
  ASSERT_TRUE(env);
  EXPECT_EQ(no_device_reason(*env), "");
  auto s = Session::create_from_bytes(env, shape_chain_model());
  EXPECT_TRUE(s.has_value()) << s.status().message();
  auto bad = virtual_env({{"precision", "fp8"}});
  ASSERT_TRUE(bad);
  EXPECT_NE(no_device_reason(*bad).find("precision must be fp32 or fp16"), std::string::npos) << no_device_reason(*bad);
}

TEST(CudaVirtualDevice, PinnedStagingIsAnOption) {
  auto env = virtual_env({{"pinned_staging_mb", "0"}});
  ASSERT_TRUE(env);
  EXPECT_EQ(no_device_reason(*env), "");
  auto s = Session::create_from_bytes(env, shape_chain_model());
  EXPECT_TRUE(s.has_value()) << s.status().message();
  for (const std::string bad : {"-1", "lots", "70000"}) {
    auto e = virtual_env({{"pinned_staging_mb", bad}});
    ASSERT_TRUE(e);
    EXPECT_NE(no_device_reason(*e).find("pinned_staging_mb must be"), std::string::npos) << no_device_reason(*e);
  }
}

TEST(CudaVirtualDevice, CudaGraphIsAnOption) {
  auto env = virtual_env({{"enable_cuda_graph", "1"}});
  ASSERT_TRUE(env);
  EXPECT_EQ(no_device_reason(*env), "");
  auto s = Session::create_from_bytes(env, shape_chain_model());
  EXPECT_TRUE(s.has_value()) << s.status().message();  // a virtual device records nothing
  auto bad = virtual_env({{"enable_cuda_graph", "maybe"}});
  ASSERT_TRUE(bad);
  EXPECT_NE(no_device_reason(*bad).find("enable_cuda_graph must be true or false"), std::string::npos)
      << no_device_reason(*bad);
}

TEST(CudaVirtualDevice, HostWaitIsAnOption) {
  for (const std::string good : {"block", "spin"}) {
    auto env = virtual_env({{"host_wait", good}});
    ASSERT_TRUE(env);
    EXPECT_EQ(no_device_reason(*env), "") << good;
  }
  auto bad = virtual_env({{"host_wait", "yield"}});
  ASSERT_TRUE(bad);
  EXPECT_NE(no_device_reason(*bad).find("host_wait must be block or spin"), std::string::npos)
      << no_device_reason(*bad);
}

TEST(CudaVirtualDevice, ConvWorkspaceIsAnOption) {
  for (const std::string good : {"0", "64", "8192"}) {
    auto env = virtual_env({{"conv_workspace_mb", good}});
    ASSERT_TRUE(env);
    EXPECT_EQ(no_device_reason(*env), "") << good;
  }
  auto ort = virtual_env({{"cudnn_conv_use_max_workspace", "0"}});
  ASSERT_TRUE(ort);
  EXPECT_EQ(no_device_reason(*ort), "");
  auto bad = virtual_env({{"conv_workspace_mb", "-5"}});
  ASSERT_TRUE(bad);
  EXPECT_NE(no_device_reason(*bad).find("conv_workspace_mb"), std::string::npos) << no_device_reason(*bad);
}

// The cap: explicit megabytes, ONNX Runtime's 32 MiB without max workspace,
// else a quarter of the free memory between 256 MiB and 4 GiB.
TEST(CudaVirtualDevice, ConvWorkspaceCap) {
  constexpr size_t kMiB = size_t{1} << 20;
  cuda::EpOptions o;
  EXPECT_EQ(cuda::conv_workspace_bytes(o, 0), 256 * kMiB) << "free memory unknown";
  EXPECT_EQ(cuda::conv_workspace_bytes(o, 512 * kMiB), 256 * kMiB) << "at least 256 MiB";
  EXPECT_EQ(cuda::conv_workspace_bytes(o, 8192 * kMiB), 2048 * kMiB) << "a quarter of the free memory";
  EXPECT_EQ(cuda::conv_workspace_bytes(o, size_t{140} << 30), 4096 * kMiB) << "at most 4 GiB";
  o = cuda::parse_ep_options({{"conv_workspace_mb", "100"}});
  EXPECT_EQ(cuda::conv_workspace_bytes(o, size_t{140} << 30), 100 * kMiB);
  o = cuda::parse_ep_options({{"cudnn_conv_use_max_workspace", "false"}});
  EXPECT_EQ(cuda::conv_workspace_bytes(o, size_t{140} << 30), 32 * kMiB);
  o = cuda::parse_ep_options({{"cudnn_conv_use_max_workspace", "true"}});
  EXPECT_EQ(cuda::conv_workspace_bytes(o, size_t{140} << 30), 4096 * kMiB);
}

TEST(CudaVirtualDevice, ConvolutionCallOptions) {
  EXPECT_TRUE(cuda::EpOptions{}.cudnn_fused_conv) << "cuDNN's fused call by default";
  EXPECT_FALSE(cuda::parse_ep_options({{"cudnn_fused_conv", "0"}}).cudnn_fused_conv);
  EXPECT_TRUE(cuda::parse_ep_options({{"cudnn_fused_conv", "true"}}).cudnn_fused_conv);
  EXPECT_THROW(cuda::parse_ep_options({{"cudnn_fused_conv", "sometimes"}}), sdk::Error);
  EXPECT_EQ(cuda::EpOptions{}.conv_api, cuda::ConvApi::kLegacy) << "the legacy calls until a GPU run says otherwise";
  EXPECT_EQ(cuda::parse_ep_options({{"cudnn_conv_api", "graph"}}).conv_api, cuda::ConvApi::kGraph);
  EXPECT_EQ(cuda::parse_ep_options({{"cudnn_conv_api", "legacy"}}).conv_api, cuda::ConvApi::kLegacy);
  EXPECT_THROW(cuda::parse_ep_options({{"cudnn_conv_api", "v8"}}), sdk::Error);
}

TEST(CudaVirtualDevice, BadOptionValueIsNamed) {
  auto env = virtual_env({{"cudnn_conv_algo_search", "FASTEST"}});
  ASSERT_TRUE(env);
  const std::string reason = no_device_reason(*env);
  EXPECT_NE(reason.find("cudnn_conv_algo_search"), std::string::npos) << reason;
}

}  // namespace
}  // namespace loom
