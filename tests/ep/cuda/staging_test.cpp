// Host <-> device copies through pinned staging (plugins/cuda/pinned_transfer.h)
// on a GPU: inputs and outputs of several 8 MiB chunks and odd sizes arrive
// intact with staging on (default), off (pinned_staging_mb=0), and so small
// that copies fall back to the runtime's pageable path; and concurrent runs
// sharing a pool of two chunks (so copies wait for blocks to come back)
// stay bit-identical. (The option's parsing: virtual_device_test.cpp.)
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>

#include "ep/cuda/cuda_compare.h"

namespace loom {
namespace {

using namespace cuda_testing;

std::shared_ptr<Environment> staging_env(const std::string& megabytes) {
  Config c;
  c.providers = {"cuda"};
  c.fallback = FallbackPolicy::kDeny;
  c.optimization_level = OptimizationLevel::kDisabled;
  if (!megabytes.empty()) c.provider_options["cuda"] = {{"pinned_staging_mb", megabytes}};
  return testing::make_env(c);
}

// y = Neg(x): exact on any device, so copies are compared bit for bit.
std::string neg_model(int64_t n) {
  testing::ModelBuilder m;
  m.input("x", kFloat, {n});
  m.node("Neg", {"x"}, {"y"}, "neg");
  m.output("y", kFloat, {n});
  return m.bytes();
}

void expect_negated(const Tensor& x, const Tensor& y, const std::string& what) {
  ASSERT_EQ(y.element_count(), x.element_count()) << what;
  const float* a = x.data_as<float>();
  const float* b = y.data_as<float>();
  int64_t wrong = 0;
  for (int64_t i = 0; i < x.element_count(); ++i) wrong += b[i] != -a[i];
  EXPECT_EQ(wrong, 0) << what << ": " << wrong << " elements came back wrong";
}

TEST(CudaStaging, ChunkedCopiesArriveIntactWithStagingOnOffAndTooSmall) {
  LOOM_SKIP_WITHOUT_GPU();
  // 5 MiB + 3 floats, and 2.5 chunks of 8 MiB plus an odd tail.
  for (int64_t n : {int64_t{(5 << 18) + 3}, int64_t{(5 << 20) + 12345}}) {
    const Tensor x = random_tensor(DType::kFloat, {n}, 9);
    for (const std::string mb : {"", "0", "1", "16"}) {
      const std::string what = std::to_string(n) + " floats, pinned_staging_mb '" + mb + "'";
      auto s = make_session(staging_env(mb), neg_model(n));
      ASSERT_TRUE(s) << what;
      for (int run = 0; run < 3; ++run) {
        auto out = s->run({{"x", x}});
        ASSERT_TRUE(out.has_value()) << what << ": " << out.status().message();
        expect_negated(x, (*out)[0], what + ", run " + std::to_string(run));
      }
    }
  }
}

TEST(CudaStaging, ConcurrentRunsShareASmallPoolAndStayIntact) {
  LOOM_SKIP_WITHOUT_GPU();
  const int64_t n = (3 << 20) + 7;  // 12 MiB: two chunks each way per run
  auto s = make_session(staging_env("16"), neg_model(n));
  ASSERT_TRUE(s);
  std::vector<Tensor> inputs;
  for (uint32_t t = 0; t < 4; ++t) inputs.push_back(random_tensor(DType::kFloat, {n}, 20 + t));
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (size_t t = 0; t < inputs.size(); ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) {
        auto out = s->run({{"x", inputs[t]}});
        if (!out.has_value()) {
          ++failures;
          continue;
        }
        const float* a = inputs[t].data_as<float>();
        const float* b = (*out)[0].data_as<float>();
        for (int64_t k = 0; k < n; ++k)
          if (b[k] != -a[k]) {
            ++failures;
            break;
          }
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace loom
