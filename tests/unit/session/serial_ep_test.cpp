// An EP that declares it cannot run concurrently (LOOM_EP_FLAG_NO_CONCURRENT_RUNS)
// gets one step at a time, whatever the number of threads and sessions.
#include <gtest/gtest.h>

#include <thread>

#include "common/model_builder.h"
#include "common/test_env.h"

namespace loom {
namespace {

TEST(SerialEpTest, StepsOfANonConcurrentEpNeverOverlap) {
  Config c;
  c.providers = {"test_serial"};
  c.fallback = FallbackPolicy::kDeny;
  auto env = testing::make_env(c, "device");
  testing::ModelBuilder m(14);
  m.input("x", ::onnx::TensorProto::FLOAT, {4});
  m.node("Relu", {"x"}, {"y"});
  m.output("y", ::onnx::TensorProto::FLOAT, {4});
  // Two sessions of the same provider: the bound holds across sessions.
  auto a = Session::create_from_bytes(env, m.bytes());
  auto b = Session::create_from_bytes(env, m.bytes());
  ASSERT_TRUE(a.has_value() && b.has_value());
  for (const auto& n : (*a)->placement().nodes) EXPECT_EQ(n.provider, "test_serial");
  const std::map<std::string, Tensor> in = {{"x", testing::float_tensor({4}, {-1, 2, -3, 4})}};
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      const Session& s = t % 2 ? **a : **b;
      for (int r = 0; r < 25; ++r) {
        auto out = s.run(in);
        if (!out || testing::values_of((*out)[0]) != std::vector<float>{0, 2, 0, 4}) ++failures;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  auto max_in_flight = testing::plugin_symbol<int (*)()>(testing::test_plugin_dir("device") + "/libloom_test_device_ep.so",
                                                         "loom_test_serial_max_in_flight");
  ASSERT_NE(max_in_flight, nullptr);
  // 8 threads x 25 runs of a 200 us kernel would overlap without the bound.
  EXPECT_EQ(max_in_flight(), 1);
}

}  // namespace
}  // namespace loom
