// The CUDA EP. Everywhere: the plugin loads (its libraries are there) and,
// without a driver or GPU, reports no device with the reason, and a session
// that asks for it fails naming that reason; the preflight names a missing
// library. The kernels against the reference EP are in the other files of
// this folder.
#include <gtest/gtest.h>

#include <algorithm>

#include "common/model_builder.h"
#include "common/test_env.h"
#include "loader/preflight.h"

namespace loom {
namespace {

std::shared_ptr<Environment> cuda_env(FallbackPolicy fallback = FallbackPolicy::kDeny) {
  Config c;
  c.providers = {"cuda"};
  c.fallback = fallback;
  c.optimization_level = OptimizationLevel::kDisabled;
  return testing::make_env(c);
}

// The reason the cuda provider has no device, empty when it has one.
std::string no_device_reason(const Environment& env) {
  for (const PluginReport& r : env.plugin_reports())
    for (const PluginReport::Factory& f : r.factories)
      if (f.name == "cuda") return f.devices.empty() ? f.unavailable_reason : "";
  return "the cuda plugin was not loaded";
}

TEST(CudaEp, PluginLoadsAndSaysWhetherThereIsADevice) {
  auto env = cuda_env();
  ASSERT_TRUE(env);
  bool loaded = false;
  for (const PluginReport& r : env->plugin_reports())
    if (r.name == "cuda") {
      loaded = r.loaded;
      EXPECT_TRUE(r.loaded) << r.refusal;
    }
  EXPECT_TRUE(loaded) << "no plugin named cuda in the plugin directory";
  const std::string reason = no_device_reason(*env);
  const auto providers = env->available_providers();
  const bool available = std::find(providers.begin(), providers.end(), "cuda") != providers.end();
  if (available) {
    EXPECT_TRUE(reason.empty());
    return;
  }
  // Without a driver: "no usable CUDA device: CUDA driver version is insufficient..." (or no GPU at all).
  EXPECT_TRUE(reason.rfind("no usable CUDA device: ", 0) == 0 || reason == "no CUDA device found") << reason;
  testing::ModelBuilder m;
  m.input("x", ::onnx::TensorProto::FLOAT, {2});
  m.node("Relu", {"x"}, {"y"});
  m.output("y", ::onnx::TensorProto::FLOAT, {2});
  auto s = Session::create_from_bytes(env, m.bytes());
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.status().message().find(reason), std::string::npos) << s.status().message();
}

TEST(CudaEp, PreflightNamesMissingLibrariesAndVersions) {
  const std::string missing = loom::cuda_loader::preflight(
      {{"libcudart.so.13", "the CUDA 13 runtime"}, {"libloom_no_such_library.so.7", "Nothing 7"}},
      {LOOM_CUDA_LIBRARY_DIR});
  EXPECT_NE(missing.find("missing libloom_no_such_library.so.7 (Nothing 7)"), std::string::npos) << missing;
  EXPECT_EQ(missing.find("libcudart"), std::string::npos) << missing;
  EXPECT_NE(missing.find(LOOM_CUDA_LIBRARY_DIR), std::string::npos) << missing;
  // What the plugin needs is here (it was built against it).
  EXPECT_EQ(loom::cuda_loader::preflight(loom::cuda_loader::required_libraries(), {LOOM_CUDA_LIBRARY_DIR}), "");
}

}  // namespace
}  // namespace loom
