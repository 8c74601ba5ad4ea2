// The pinned staging pool's bookkeeping (plugins/cuda/staging_pool.h) with
// host memory and fences the test controls: reuse after the fence passes,
// growth within the capacity, shrinking to make room, waiting for the
// oldest block in flight, and giving up when nothing can be staged. No GPU
// needed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>
#include <vector>

#include "staging_pool.h"

namespace loom::cuda {
namespace {

constexpr size_t kKiB = 1024;

// Fences are ints: 0 not passed, 1 passed. Waiting on one passes it.
struct FakeDevice {
  std::map<void*, size_t> live_memory;
  std::set<int*> live_fences;
  std::vector<int*> waited;
  bool fail_alloc = false;

  StagingPool::Backend backend() {
    StagingPool::Backend b;
    b.alloc = [this](size_t bytes) -> void* {
      if (fail_alloc) return nullptr;
      void* p = std::malloc(bytes);
      live_memory[p] = bytes;
      return p;
    };
    b.free = [this](void* p) {
      EXPECT_EQ(live_memory.erase(p), 1u) << "freed memory the pool does not hold";
      std::free(p);
    };
    b.make_fence = [this]() -> void* {
      int* f = new int(1);
      live_fences.insert(f);
      return f;
    };
    b.destroy_fence = [this](void* f) {
      EXPECT_EQ(live_fences.erase(static_cast<int*>(f)), 1u);
      delete static_cast<int*>(f);
    };
    b.fence_passed = [](void* f) { return *static_cast<int*>(f) == 1; };
    b.wait_fence = [this](void* f) {
      waited.push_back(static_cast<int*>(f));
      *static_cast<int*>(f) = 1;
    };
    return b;
  }
};

// What a copy does with a block: queue work (the fence is "recorded": not
// passed yet), then hand it to the pool.
void queue(StagingPool& pool, StagingPool::Block* b, size_t bytes) {
  *static_cast<int*>(b->fence) = 0;
  pool.mark_in_flight(b, bytes);
}

TEST(StagingPool, ReusesABlockOnlyAfterItsFencePassed) {
  FakeDevice dev;
  StagingPool pool(dev.backend(), 1024 * kKiB, 256 * kKiB);
  StagingPool::Block* a = pool.acquire(100 * kKiB);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->bytes, 128 * kKiB);  // powers of two from 64 KiB
  queue(pool, a, 100 * kKiB);
  StagingPool::Block* b = pool.acquire(100 * kKiB);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(b, a) << "a block in flight was handed out again";
  pool.give_back(b);
  *static_cast<int*>(a->fence) = 1;  // the device got past the copy
  StagingPool::Block* c = pool.acquire(120 * kKiB);
  EXPECT_TRUE(c == a || c == b);
  EXPECT_EQ(dev.live_memory.size(), 2u);
  const StagingStats s = pool.stats();
  EXPECT_EQ(s.held_bytes, 256 * kKiB);
  EXPECT_EQ(s.staged_chunks, 1u);
  EXPECT_EQ(s.staged_bytes, 100 * kKiB);
  EXPECT_EQ(s.waits, 0u);
}

TEST(StagingPool, WaitsForTheOldestBlockWhenFull) {
  FakeDevice dev;
  StagingPool pool(dev.backend(), 256 * kKiB, 128 * kKiB);
  StagingPool::Block* first = pool.acquire(128 * kKiB);
  queue(pool, first, 128 * kKiB);
  StagingPool::Block* second = pool.acquire(128 * kKiB);
  queue(pool, second, 128 * kKiB);
  StagingPool::Block* third = pool.acquire(128 * kKiB);
  ASSERT_EQ(third, first) << "the pool should wait for the oldest block and reuse it";
  ASSERT_EQ(dev.waited.size(), 1u);
  EXPECT_EQ(dev.waited[0], first->fence);
  EXPECT_EQ(pool.stats().waits, 1u);
  EXPECT_EQ(pool.stats().held_bytes, 256 * kKiB) << "grew past its capacity";
}

TEST(StagingPool, FreesIdleBlocksTooSmallToMakeRoom) {
  FakeDevice dev;
  StagingPool pool(dev.backend(), 256 * kKiB, 256 * kKiB);
  StagingPool::Block* small1 = pool.acquire(10 * kKiB);
  StagingPool::Block* small2 = pool.acquire(10 * kKiB);
  pool.give_back(small1);
  pool.give_back(small2);
  EXPECT_EQ(pool.stats().held_bytes, 128 * kKiB);
  StagingPool::Block* big = pool.acquire(200 * kKiB);
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(big->bytes, 256 * kKiB);
  EXPECT_EQ(pool.stats().held_bytes, 256 * kKiB);
  EXPECT_EQ(pool.stats().blocks_freed, 2u);
  EXPECT_EQ(dev.live_memory.size(), 1u);
}

TEST(StagingPool, DoesNotStageWhatItCannotHold) {
  FakeDevice dev;
  StagingPool off(dev.backend(), 0, 8 * 1024 * kKiB);
  EXPECT_EQ(off.acquire(1), nullptr) << "capacity 0 turns staging off";
  StagingPool pool(dev.backend(), 128 * kKiB, 128 * kKiB);
  EXPECT_EQ(pool.acquire(0), nullptr);
  EXPECT_EQ(pool.acquire(129 * kKiB), nullptr) << "a chunk over chunk_bytes";
  StagingPool::Block* held = pool.acquire(128 * kKiB);
  ASSERT_NE(held, nullptr);
  // Reserved (not yet queued): waiting on it could wait forever.
  EXPECT_EQ(pool.acquire(64 * kKiB), nullptr);
  EXPECT_TRUE(dev.waited.empty());
  pool.give_back(held);
  dev.fail_alloc = true;
  StagingPool fails(dev.backend(), 1024 * kKiB, 128 * kKiB);
  EXPECT_EQ(fails.acquire(64 * kKiB), nullptr) << "a failed page-locked allocation falls back";
  EXPECT_EQ(fails.stats().unstaged_chunks, 1u);
  EXPECT_EQ(fails.stats().held_bytes, 0u);
}

TEST(StagingPool, TrimAndDestructionGiveEverythingBack) {
  FakeDevice dev;
  {
    StagingPool pool(dev.backend(), 1024 * kKiB, 256 * kKiB);
    StagingPool::Block* a = pool.acquire(256 * kKiB);
    StagingPool::Block* b = pool.acquire(64 * kKiB);
    queue(pool, a, 256 * kKiB);
    pool.give_back(b);
    pool.trim();
    EXPECT_EQ(pool.stats().held_bytes, 256 * kKiB) << "trim freed a block in flight";
    EXPECT_EQ(pool.stats().peak_bytes, 320 * kKiB);
    EXPECT_EQ(dev.live_memory.size(), 1u);
  }
  EXPECT_EQ(dev.waited.size(), 1u) << "destruction must wait for blocks in flight";
  EXPECT_TRUE(dev.live_memory.empty());
  EXPECT_TRUE(dev.live_fences.empty());
}

}  // namespace
}  // namespace loom::cuda
