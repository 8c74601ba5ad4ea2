// Memory faults over a whole run. Device: the test_async EP's allocator,
// under the core's arena, refuses its Nth allocation (and every later one,
// or that one alone) for every N a run makes; the run fails with
// kOutOfMemory naming the arena, nothing leaks, and once the allocator
// works again the same session gives correct results. Host: host memory has
// no allocator to make fail, so its arena's limit (memory.arena_limit_mb) is
// swept instead, making each growth of a run the one refused. (That a limit
// is honoured at all is SessionMemoryTest.ArenaLimitRefusesBigRunsAndStaysUsable.)
#include <gtest/gtest.h>

#include <string>

#include "common/async_fault_plugin.h"
#include "common/memory_stats.h"

namespace loom {
namespace {

using testing::chain_input;
using testing::chain_model;
using testing::expected_chain_output;
using testing::FaultEnv;
using testing::live;
using testing::values_of;

// 256 x 1024 floats: 1 MiB per tensor. The rows are dynamic, so each
// intermediate is its own arena allocation, and with exact growth each one
// that does not fit asks the allocator for a chunk of its own.
constexpr int64_t kRows = 256, kCols = 1024;

Config exact_growth() {
  Config c;
  c.arena_growth = ArenaGrowth::kExact;
  return c;
}

using testing::stats_of;

void expect_out_of_memory(const Status& st, const std::string& arena) {
  EXPECT_EQ(st.code(), StatusCode::kOutOfMemory) << st.message();
  EXPECT_NE(st.message().find("arena '" + arena + "'"), std::string::npos) << st.message();
}

// Device allocations made by session creation plus one run.
uint64_t allocations_of_a_run() {
  FaultEnv f({}, exact_growth());
  if (!f.ready()) return 0;
  const uint64_t before = f.hooks.calls("allocate");
  auto s = Session::create_from_bytes(f.env, chain_model(-1, kCols));
  if (!s.has_value()) return 0;
  auto out = (*s)->run({{"x", chain_input(kRows, kCols)}});
  return out.has_value() ? f.hooks.calls("allocate") - before : 0;
}

TEST(AllocationFaultTest, EveryDeviceAllocationOfARunFailsCleanly) {
  const uint64_t total = allocations_of_a_run();
  ASSERT_GE(total, 3u) << "the run should ask the device allocator several times";
  const Tensor x = chain_input(kRows, kCols);
  for (const bool once : {false, true})
    for (uint64_t n = 1; n <= total; ++n) {
      SCOPED_TRACE((once ? "only allocation " : "allocations from ") + std::to_string(n) + " of " +
                   std::to_string(total) + " refused");
      std::map<std::string, std::string> options = {{"fail_at", "allocate"}, {"fail_call", std::to_string(n)}};
      if (once) options["fail_once"] = "1";
      FaultEnv f(options, exact_growth());
      ASSERT_TRUE(f.ready());
      {
        bool failed = false;
        auto s = Session::create_from_bytes(f.env, chain_model(-1, kCols));
        if (!s.has_value()) {
          failed = true;
          expect_out_of_memory(s.status(), "test_async");
          f.hooks.disarm();
          s = Session::create_from_bytes(f.env, chain_model(-1, kCols));
        }
        ASSERT_TRUE(s.has_value()) << s.status().message();
        auto first = (*s)->run({{"x", x}});
        if (!first.has_value()) {
          failed = true;
          expect_out_of_memory(first.status(), "test_async");
          const std::optional<MemoryStats> st = stats_of((*s)->memory_stats(), "test_async");
          ASSERT_TRUE(st);
          EXPECT_GE(st->failed_allocations, 1);
          EXPECT_EQ(st->in_use_bytes, 0) << "a failed run gives back what it took";
        } else {
          // A single refusal may be absorbed (the arena retries with an
          // exact-size chunk); a run that succeeds must still be right.
          EXPECT_EQ(values_of((*first)[0]), expected_chain_output(x));
        }
        if (!once) {
          EXPECT_TRUE(failed) << "allocation " << n << " was refused but nothing failed";
        }
        f.hooks.disarm();
        for (int i = 0; i < 2; ++i) {
          auto again = (*s)->run({{"x", x}});
          ASSERT_TRUE(again.has_value()) << again.status().message();
          EXPECT_EQ(values_of((*again)[0]), expected_chain_output(x));
        }
      }
      EXPECT_EQ(live(f.hooks), f.baseline) << "device memory, streams and events all went back";
    }
}

TEST(AllocationFaultTest, HostArenaRefusingEachGrowthOfARunFailsCleanly) {
  Config config = exact_growth();
  config.providers = {"reference"};
  config.optimization_level = OptimizationLevel::kDisabled;
  const Tensor x = chain_input(kRows, kCols);
  const Tensor small = chain_input(4, kCols);
  int64_t needed_mb = 0;
  {
    auto s = Session::create_from_bytes(testing::make_env(config), chain_model(-1, kCols));
    ASSERT_TRUE(s.has_value()) << s.status().message();
    ASSERT_TRUE((*s)->run({{"x", x}}).has_value());
    needed_mb = (stats_of((*s)->memory_stats(), "cpu")->peak_reserved_bytes + (1 << 20) - 1) >> 20;
  }
  ASSERT_GE(needed_mb, 3);
  int refused = 0;
  for (int64_t limit = 1; limit <= needed_mb; ++limit) {
    SCOPED_TRACE("cpu arena limit " + std::to_string(limit) + " MiB of " + std::to_string(needed_mb));
    config.arena_limit_mb = {{"cpu", limit}};
    auto s = Session::create_from_bytes(testing::make_env(config), chain_model(-1, kCols));
    ASSERT_TRUE(s.has_value()) << s.status().message();
    auto big = (*s)->run({{"x", x}});
    if (!big.has_value()) {
      ++refused;
      expect_out_of_memory(big.status(), "cpu");
      EXPECT_EQ(stats_of((*s)->memory_stats(), "cpu")->in_use_bytes, 0) << "a failed run gives back what it took";
    } else {
      EXPECT_EQ(values_of((*big)[0]), expected_chain_output(x));
    }
    auto after = (*s)->run({{"x", small}});
    ASSERT_TRUE(after.has_value()) << after.status().message();
    EXPECT_EQ(values_of((*after)[0]), expected_chain_output(small));
  }
  EXPECT_GE(refused, 2) << "the sweep should refuse the run at several points";
}

}  // namespace
}  // namespace loom
