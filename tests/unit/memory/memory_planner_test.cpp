#include "memory/memory_planner.h"

#include <gtest/gtest.h>

namespace loom::memory {
namespace {

bool overlaps(int64_t a, int64_t an, int64_t b, int64_t bn) { return a < b + bn && b < a + an; }

TEST(MemoryPlannerTest, DisjointLifetimesShareBytes) {
  // a: steps 0-1, b: steps 1-2, c: steps 2-3. a and c never live together.
  std::vector<BufferRequest> r = {{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}};
  MemoryPlan p = plan_memory(r);
  EXPECT_EQ(p.offsets[0], p.offsets[2]);
  EXPECT_LT(p.arena_bytes, 3 * 1024);
  EXPECT_GE(p.arena_bytes, 2 * 1000);
}

TEST(MemoryPlannerTest, OverlappingLifetimesNeverShare) {
  std::vector<BufferRequest> r;
  for (int i = 0; i < 40; ++i) r.push_back({100 + 37 * (i % 7), i % 10, i % 10 + i % 4});
  MemoryPlan p = plan_memory(r);
  for (size_t i = 0; i < r.size(); ++i) {
    EXPECT_EQ(p.offsets[i] % kBufferAlignment, 0);
    EXPECT_LE(p.offsets[i] + r[i].bytes, p.arena_bytes);
    for (size_t j = i + 1; j < r.size(); ++j) {
      const bool live_together = r[i].first_step <= r[j].last_step && r[j].first_step <= r[i].last_step;
      if (live_together) EXPECT_FALSE(overlaps(p.offsets[i], r[i].bytes, p.offsets[j], r[j].bytes)) << i << " " << j;
    }
  }
}

TEST(MemoryPlannerTest, PeakIsSumOfLiveBuffersForAChain) {
  // A chain where each buffer lives for two steps: peak is two buffers.
  std::vector<BufferRequest> r;
  for (int i = 0; i < 10; ++i) r.push_back({4096, i, i + 1});
  EXPECT_EQ(plan_memory(r).arena_bytes, 2 * 4096);
}

}  // namespace
}  // namespace loom::memory
