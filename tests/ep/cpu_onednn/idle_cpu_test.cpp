// An idle session costs no CPU: after a run on cpu_onednn with two OpenMP
// threads, their bounded spin ends within milliseconds (the loader's
// GOMP_SPINCOUNT) and the process then sleeps.
#include <chrono>
#include <iostream>
#include <thread>

#include "ep_compare.h"
#include "common/cpu_time.h"

namespace loom::ep_testing {
namespace {


TEST(OnednnIdle, AnIdleSessionUsesAlmostNoCpu) {
  testing::ModelBuilder m;
  m.input("x", kFloat, {1, 16, 32, 32});
  random_weights(m, "w", {32, 16, 3, 3}, 1, 144);
  add_ints_attr(m.node("Conv", {"x", "w"}, {"c"}), "pads", {1, 1, 1, 1});
  m.node("Relu", {"c"}, {"y"});
  m.output("y", kFloat, {});
  auto s = make_session(environment({"cpu_onednn"}, FallbackPolicy::kDeny, 2), m.bytes());
  ASSERT_TRUE(s);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(s->run({{"x", random_tensor({1, 16, 32, 32}, 3)}}).has_value());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the bounded spin ends
  const double before = loom::testing::process_cpu_ms();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const double used = loom::testing::process_cpu_ms() - before;
  // ~0 %: allow 2 % of one core for timer ticks and the test harness.
  EXPECT_LT(used, 10.0) << "the idle process used " << used << " ms of CPU in 500 ms";
  std::cout << "idle CPU over 500 ms: " << used << " ms\n";
}

}  // namespace
}  // namespace loom::ep_testing
