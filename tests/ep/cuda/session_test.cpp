// The CUDA EP inside whole sessions on a GPU: a model split between GPU and
// CPU (copies and one host wait, per the plan), concurrent runs of one
// session bit-identical to a single thread, and no device memory kept
// across 100 session create / run / destroy cycles (cudaMemGetInfo), and
// kernel scratch bounded by the run's limits.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <thread>

#include "ep/cuda/cuda_compare.h"

namespace loom {
namespace {

using namespace cuda_testing;

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

std::shared_ptr<Environment> cuda_and_reference() {
  static auto env = environment({"cuda", "reference"}, FallbackPolicy::kAllow);
  return env;
}

// x -> Mul(w) -> Relu -> Hardmax (only the reference EP has it) -> Add(b) -> Sigmoid.
std::string mixed_model() {
  testing::ModelBuilder m;
  m.input("x", kFloat, {8, 300});
  const Tensor w = random_tensor(DType::kFloat, {300}, 3);
  m.float_initializer("w", {300}, std::vector<float>(w.data_as<float>(), w.data_as<float>() + 300));
  m.float_initializer("b", {1}, {0.25f});
  m.node("Mul", {"x", "w"}, {"a"}, "mul");
  m.node("Relu", {"a"}, {"r"}, "relu");
  m.node("Hardmax", {"r"}, {"h"}, "hardmax");
  m.node("Add", {"h", "b"}, {"s"}, "add");
  m.node("Sigmoid", {"s"}, {"y"}, "sigmoid");
  m.output("y", kFloat, {8, 300});
  return m.bytes();
}

TEST(CudaSession, MixedModelCopiesAndWaitsOncePerCrossing) {
  LOOM_SKIP_WITHOUT_GPU();
  auto gpu = make_session(cuda_and_reference(), mixed_model());
  auto ref = make_session(reference_env(), mixed_model());
  ASSERT_TRUE(gpu && ref);
  for (const auto& n : gpu->placement().nodes) EXPECT_EQ(n.provider, n.node_name == "hardmax" ? "reference" : "cuda");
  // x in, r out to the host (one host wait), h back in (no wait: the host
  // made it), y out; the weights once per session.
  const std::string plan = gpu->describe_plan();
  EXPECT_EQ(count(plan, "host waits for event"), 1u) << plan;
  EXPECT_EQ(count(plan, "record event"), 1u) << plan;
  EXPECT_EQ(count(plan, "[1] wait for"), 0u) << plan;
  const Tensor x = random_tensor(DType::kFloat, {8, 300}, 1);
  auto want = ref->run({{"x", x}});
  ASSERT_TRUE(want.has_value());
  for (int i = 0; i < 3; ++i) {
    auto got = gpu->run({{"x", x}});
    ASSERT_TRUE(got.has_value()) << got.status().message();
    expect_close((*want)[0], (*got)[0], {1e-5, 1e-6}, "mixed model run " + std::to_string(i));
  }
}

TEST(CudaSession, ConcurrentRunsAreBitIdentical) {
  LOOM_SKIP_WITHOUT_GPU();
  auto gpu = make_session(cuda_and_reference(), mixed_model());
  ASSERT_TRUE(gpu);
  const Tensor x = random_tensor(DType::kFloat, {8, 300}, 2);
  auto first = gpu->run({{"x", x}});
  ASSERT_TRUE(first.has_value()) << first.status().message();
  const Tensor& expected = (*first)[0];
  std::atomic<int> mismatches{0}, failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 100; ++i) {
        auto out = gpu->run({{"x", x}});
        if (!out.has_value()) {
          ++failures;
          continue;
        }
        if (std::memcmp((*out)[0].data(), expected.data(), expected.byte_size()) != 0) ++mismatches;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(mismatches.load(), 0);
}

// Free device memory as the CUDA runtime the plugin loaded sees it.
size_t free_device_bytes() {
  void* rt = dlopen("libcudart.so.13", RTLD_NOW | RTLD_NOLOAD);
  if (rt == nullptr) return 0;
  using MemGetInfo = int (*)(size_t*, size_t*);
  auto fn = reinterpret_cast<MemGetInfo>(dlsym(rt, "cudaMemGetInfo"));
  size_t free = 0, total = 0;
  if (fn == nullptr || fn(&free, &total) != 0) free = 0;
  dlclose(rt);
  return free;
}

// The EP's working memory comes from the host (LOOM_HostApi::kernel_scratch)
// and counts against the run's limits: a Conv whose asymmetric end pads are
// applied by copying X into a pre-padded 600x600 buffer (1.4 MB) is refused
// under a 1 MiB tensor limit, although X, W and Y are each under it. A pad
// small enough keeps the buffer under the limit and runs.
TEST(CudaSession, ScratchCountsAgainstTheTensorLimit) {
  LOOM_SKIP_WITHOUT_GPU();
  Config c;
  c.providers = {"cuda"};
  c.fallback = FallbackPolicy::kDeny;
  c.max_tensor_mb = 1;
  auto env = testing::make_env(c);
  ASSERT_TRUE(env);
  auto model = [](int64_t end_pad) {
    testing::ModelBuilder m;
    m.input("x", kFloat, {1, 1, 400, 400});
    m.float_initializer("w", {1, 1, 1, 1}, {2.0f});
    auto& n = m.node("Conv", {"x", "w"}, {"y"}, "padded_conv");
    testing::add_ints_attr(n, "pads", {0, 0, end_pad, end_pad});
    testing::add_ints_attr(n, "strides", {2, 2});
    m.output("y", kFloat, {-1, -1, -1, -1});
    return m.bytes();
  };
  const std::map<std::string, Tensor> feeds = {{"x", random_tensor(DType::kFloat, {1, 1, 400, 400}, 5)}};
  auto big = make_session(env, model(200));
  ASSERT_TRUE(big);
  auto refused = big->run(feeds);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.status().code(), StatusCode::kOutOfMemory) << refused.status().message();
  EXPECT_NE(refused.status().message().find("limits.max_tensor_mb (1 MiB)"), std::string::npos)
      << refused.status().message();
  auto small = make_session(env, model(8));
  ASSERT_TRUE(small);
  auto ran = small->run(feeds);
  EXPECT_TRUE(ran.has_value()) << ran.status().message();
}

TEST(CudaSession, NoDeviceMemoryKeptAcrossSessions) {
  LOOM_SKIP_WITHOUT_GPU();
  const Tensor x = random_tensor(DType::kFloat, {8, 300}, 4);
  auto cycle = [&] {
    auto s = make_session(cuda_and_reference(), mixed_model());
    ASSERT_TRUE(s);
    auto out = s->run({{"x", x}});
    ASSERT_TRUE(out.has_value()) << out.status().message();
  };
  cycle();  // libraries initialised, handles and pools made once
  const size_t before = free_device_bytes();
  ASSERT_GT(before, 0u) << "cudaMemGetInfo unavailable";
  for (int i = 0; i < 100; ++i) cycle();
  const size_t after = free_device_bytes();
  const double leaked_mib = (static_cast<double>(before) - static_cast<double>(after)) / (1 << 20);
  RecordProperty("device_mib_lost_over_100_sessions", std::to_string(leaked_mib));
  EXPECT_LT(leaked_mib, 16.0) << "free device memory fell by " << leaked_mib << " MiB over 100 sessions";
}

}  // namespace
}  // namespace loom
