// Soak: one session run from 8 threads for a while with varying input shapes
// (a symbolic batch dim), on the production CPU EP when it is built. Every
// result equals the single-threaded result for that shape bit for bit, and
// the resident set stays flat once every shape has been seen (memory
// patterns, arenas and compiled programs are warm).
//
// LOOM_SOAK_SECONDS sets the length (default 3 s in CI; run it for minutes
// by hand: LOOM_SOAK_SECONDS=300 loom_unit_tests --gtest_filter='Soak*').
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <thread>

#include "common/model_builder.h"
#include "common/rss.h"
#include "common/test_env.h"

namespace loom {
namespace {

constexpr int64_t kFeatures = 64, kHidden = 128, kMaxBatch = 32;

// y = Softmax(Relu(x·W + b)), x [batch, 64] with a symbolic batch.
std::string mlp_model() {
  testing::ModelBuilder m(14);
  m.input("x", ::onnx::TensorProto::FLOAT, {-1, kFeatures});
  std::vector<float> w(kFeatures * kHidden), b(kHidden);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>((i * 7919) % 201) / 1000.0f - 0.1f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 5) / 10.0f;
  m.float_initializer("W", {kFeatures, kHidden}, w);
  m.float_initializer("b", {kHidden}, b);
  m.node("MatMul", {"x", "W"}, {"xw"});
  m.node("Add", {"xw", "b"}, {"h"});
  m.node("Relu", {"h"}, {"r"});
  auto& sm = m.node("Softmax", {"r"}, {"y"});
  testing::add_int_attr(sm, "axis", -1);
  m.output("y", ::onnx::TensorProto::FLOAT, {-1, kHidden});
  return m.bytes();
}

Tensor input_for(int64_t batch) {
  std::vector<float> x(static_cast<size_t>(batch * kFeatures));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 31 + batch) % 97) / 50.0f - 1.0f;
  return testing::float_tensor({batch, kFeatures}, x);
}

double soak_seconds() {
  const char* s = std::getenv("LOOM_SOAK_SECONDS");
  return s != nullptr ? std::max(1.0, std::atof(s)) : 3.0;
}

TEST(Soak, EightThreadsVaryingShapesSameResultsFlatMemory) {
  Config config;
  config.providers = testing::has_provider("cpu_onednn") ? std::vector<std::string>{"cpu_onednn", "reference"}
                                                         : std::vector<std::string>{"reference"};
  auto env = testing::make_env(config);
  ASSERT_TRUE(env);
  auto session = Session::create_from_bytes(env, mlp_model());
  ASSERT_TRUE(session.has_value()) << session.status().message();
  const Session& s = **session;

  // Single-threaded results per batch size, and every shape warmed once.
  std::map<int64_t, std::vector<float>> expected;
  for (int64_t batch = 1; batch <= kMaxBatch; ++batch) {
    auto out = s.run({{"x", input_for(batch)}});
    ASSERT_TRUE(out.has_value()) << out.status().message();
    expected[batch] = testing::values_of((*out)[0]);
  }

  const double seconds = soak_seconds();
  const auto start = std::chrono::steady_clock::now();
  const auto end = start + std::chrono::duration<double>(seconds);
  const auto warm = start + std::chrono::duration<double>(seconds / 4);
  std::atomic<int64_t> runs{0}, mismatches{0}, failures{0};
  std::atomic<int64_t> rss_after_warmup{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      uint64_t state = 0x9e3779b97f4a7c15ULL * static_cast<uint64_t>(t + 1);
      while (std::chrono::steady_clock::now() < end) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        const int64_t batch = 1 + static_cast<int64_t>((state >> 33) % kMaxBatch);
        auto out = s.run({{"x", input_for(batch)}});
        if (!out.has_value()) {
          ++failures;
          continue;
        }
        if (testing::values_of((*out)[0]) != expected[batch]) ++mismatches;
        ++runs;
        if (t == 0 && rss_after_warmup.load() == 0 && std::chrono::steady_clock::now() >= warm)
          rss_after_warmup = testing::rss_bytes();
      }
    });
  for (auto& th : threads) th.join();
  const int64_t rss_end = testing::rss_bytes();

  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_GT(runs.load(), 100);
  ASSERT_GT(rss_after_warmup.load(), 0);
  const double grown_mb = static_cast<double>(rss_end - rss_after_warmup.load()) / (1 << 20);
  if (!testing::kAddressSanitizer)
    EXPECT_LT(grown_mb, 16.0) << "RSS grew " << grown_mb << " MiB after warm-up over " << runs.load() << " runs";
  std::printf("soak: %lld runs in %.1f s on %s, RSS %+.1f MiB after warm-up\n", static_cast<long long>(runs.load()),
              seconds, config.providers.front().c_str(), grown_mb);
}

}  // namespace
}  // namespace loom
