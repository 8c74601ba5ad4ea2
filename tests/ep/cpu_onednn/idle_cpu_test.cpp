// An idle session costs no CPU: after a run on cpu_onednn with two OpenMP
// threads, their bounded spin ends within milliseconds (the loader's
// GOMP_SPINCOUNT) and the process then sleeps.
#include <sys/resource.h>

#include <chrono>
#include <iostream>
#include <thread>

#include "ep_compare.h"

namespace loom::ep_testing {
namespace {

double process_cpu_ms() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto ms = [](const timeval& t) { return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_usec) / 1e3; };
  return ms(u.ru_utime) + ms(u.ru_stime);
}

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
  const double before = process_cpu_ms();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const double used = process_cpu_ms() - before;
  // ~0 %: allow 2 % of one core for timer ticks and the test harness.
  EXPECT_LT(used, 10.0) << "the idle process used " << used << " ms of CPU in 500 ms";
  std::cout << "idle CPU over 500 ms: " << used << " ms\n";
}

}  // namespace
}  // namespace loom::ep_testing
