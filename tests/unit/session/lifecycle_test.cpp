// Sessions under load: creating and destroying many leaves memory flat, and
// many threads running one session get the single-threaded outputs bit for
// bit, on the reference EP and with cpu_onednn first.
#include <gtest/gtest.h>

#include <thread>

#include "common/model_builder.h"
#include "common/rss.h"
#include "common/test_env.h"

#if defined(__SANITIZE_ADDRESS__)
#define LOOM_ADDRESS_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LOOM_ADDRESS_SANITIZER 1
#endif
#endif
#ifndef LOOM_ADDRESS_SANITIZER
#define LOOM_ADDRESS_SANITIZER 0
#endif
#if LOOM_ADDRESS_SANITIZER
#include <sanitizer/lsan_interface.h>
#endif

namespace loom {
namespace {

constexpr auto kFloat = ::onnx::TensorProto::FLOAT;

using testing::rss_bytes;

// y = Relu(MatMul(x, W) + b) with a 1 MiB W, so a leaked session (or a
// leaked copy of its weights) shows in RSS at once.
std::string dense_model() {
  testing::ModelBuilder m(14);
  m.input("x", kFloat, {4, 512});
  std::vector<float> w(512 * 512);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>((i * 7919) % 1000) / 1000.f - 0.5f;
  m.float_initializer("w", {512, 512}, w);
  m.float_initializer("b", {512}, std::vector<float>(512, 0.25f));
  m.node("MatMul", {"x", "w"}, {"h"});
  m.node("Add", {"h", "b"}, {"hb"});
  m.node("Relu", {"hb"}, {"y"});
  m.output("y", kFloat, {4, 512});
  return m.bytes();
}

std::map<std::string, Tensor> dense_inputs(float scale) {
  std::vector<float> x(4 * 512);
  for (size_t i = 0; i < x.size(); ++i) x[i] = scale * static_cast<float>((i * 31) % 97) / 97.f;
  return {{"x", testing::float_tensor({4, 512}, x)}};
}

std::shared_ptr<Environment> env_for(std::vector<std::string> providers) {
  Config c;
  c.providers = std::move(providers);
  c.intra_op_threads = 1;
  return testing::make_env(c);
}

class Lifecycle : public ::testing::TestWithParam<std::vector<std::string>> {
 protected:
  void SetUp() override {
    if (!testing::has_provider(GetParam().front())) GTEST_SKIP() << GetParam().front() << " is not in this build";
  }
};

TEST_P(Lifecycle, ThousandSessionsLeaveRssFlat) {
  auto env = env_for(GetParam());
  const std::string model = dense_model();
  const auto in = dense_inputs(1.f);
  auto cycle = [&](int n) {
    for (int i = 0; i < n; ++i) {
      auto s = Session::create_from_bytes(env, model);
      ASSERT_TRUE(s.has_value()) << s.status().message();
      auto out = (*s)->run(in);
      ASSERT_TRUE(out.has_value()) << out.status().message();
    }
  };
  cycle(100);  // allocator pools and caches reach their steady size
#if LOOM_ADDRESS_SANITIZER
  // Under AddressSanitizer freed memory waits in a quarantine, so RSS says
  // nothing about leaks (it grew 10 MB on a busy machine): LeakSanitizer
  // looks for unreachable blocks right after the cycles instead.
  cycle(1000);
  EXPECT_EQ(__lsan_do_recoverable_leak_check(), 0) << "LeakSanitizer found leaks after 1000 cycles (see its report)";
#else
  const int64_t before = rss_bytes();
  cycle(1000);
  const int64_t grown = rss_bytes() - before;
  // A leaked session would hold at least its 1 MiB of weights: 1000 of them a GiB.
  EXPECT_LT(grown, 8 << 20) << "RSS grew by " << grown / 1024 << " KiB over 1000 create / run / destroy cycles";
#endif
}

TEST_P(Lifecycle, EightThreadsAThousandRunsEachMatchOneThreadBitForBit) {
  auto s = Session::create_from_bytes(env_for(GetParam()), dense_model());
  ASSERT_TRUE(s.has_value()) << s.status().message();
  const Session& session = **s;
  constexpr int kThreads = 8, kRuns = 1000, kInputs = 4;
  std::vector<std::map<std::string, Tensor>> inputs;
  std::vector<std::vector<float>> expected;
  for (int k = 0; k < kInputs; ++k) {
    inputs.push_back(dense_inputs(1.f + static_cast<float>(k)));
    auto out = session.run(inputs.back());
    ASSERT_TRUE(out.has_value()) << out.status().message();
    expected.push_back(testing::values_of((*out)[0]));
  }
  std::vector<int> mismatches(kThreads, 0), errors(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRuns; ++r) {
        const int k = (t + r) % kInputs;
        auto out = session.run(inputs[static_cast<size_t>(k)]);
        if (!out) ++errors[static_cast<size_t>(t)];
        else if (testing::values_of((*out)[0]) != expected[static_cast<size_t>(k)]) ++mismatches[static_cast<size_t>(t)];
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(errors[static_cast<size_t>(t)], 0) << "thread " << t;
    EXPECT_EQ(mismatches[static_cast<size_t>(t)], 0) << "thread " << t;
  }
}

INSTANTIATE_TEST_SUITE_P(Providers, Lifecycle,
                         ::testing::Values(std::vector<std::string>{"reference"},
                                           std::vector<std::string>{"cpu_onednn", "reference"}),
                         [](const auto& info) { return info.param.front(); });

}  // namespace
}  // namespace loom
