#include "memory/arena.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <vector>

namespace loom::memory {
namespace {

// A chunk allocator over std::aligned_alloc that counts live chunks and bytes
// and records every chunk size it was asked for. refuse_above > 0 makes it
// return NULL for larger requests (a device running out of memory).
class CountingChunks {
 public:
  Arena::ChunkAlloc alloc() {
    return [this](uint64_t bytes, uint64_t alignment) -> void* {
      std::lock_guard<std::mutex> lock(mu_);
      requested_.push_back(static_cast<int64_t>(bytes));
      if (refuse_above > 0 && static_cast<int64_t>(bytes) > refuse_above) return nullptr;
      void* p = std::aligned_alloc(alignment, bytes);
      if (p != nullptr) live_[p] = static_cast<int64_t>(bytes);
      return p;
    };
  }
  Arena::ChunkFree free() {
    return [this](void* p) {
      std::lock_guard<std::mutex> lock(mu_);
      live_.erase(p);
      std::free(p);
    };
  }
  int64_t live_chunks() {
    std::lock_guard<std::mutex> lock(mu_);
    return static_cast<int64_t>(live_.size());
  }
  int64_t live_bytes() {
    std::lock_guard<std::mutex> lock(mu_);
    int64_t total = 0;
    for (auto& [p, n] : live_) total += n;
    return total;
  }
  // Sizes of the chunks actually handed out, in order.
  std::vector<int64_t> granted() {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<int64_t> out;
    for (int64_t n : requested_)
      if (refuse_above <= 0 || n <= refuse_above) out.push_back(n);
    return out;
  }
  int64_t refuse_above = 0;

 private:
  std::mutex mu_;
  std::map<void*, int64_t> live_;
  std::vector<int64_t> requested_;
};

ArenaOptions options(int64_t initial, ArenaOptions::Growth growth = ArenaOptions::Growth::kDouble, int64_t limit = 0) {
  ArenaOptions o;
  o.initial_chunk_bytes = initial;
  o.growth = growth;
  o.limit_bytes = limit;
  return o;
}

void* must(Expected<void*> e) {
  EXPECT_TRUE(e.has_value()) << e.status().message();
  return e.has_value() ? *e : nullptr;
}

TEST(ArenaTest, EveryPointerIsAligned) {
  CountingChunks chunks;
  Arena arena("cpu", chunks.alloc(), chunks.free(), options(4096));
  std::mt19937 rng(1);
  std::vector<void*> live;
  for (int i = 0; i < 500; ++i) {
    void* p = must(arena.allocate(std::uniform_int_distribution<int64_t>(0, 5000)(rng)));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % kArenaAlignment, 0u);
    live.push_back(p);
    if (i % 3 == 0) {
      arena.free(live.front());
      live.erase(live.begin());
    }
  }
  for (void* p : live) arena.free(p);
  EXPECT_EQ(arena.stats().in_use_bytes, 0);
}

TEST(ArenaTest, ReuseAfterFreeNeedsNoNewChunk) {
  CountingChunks chunks;
  Arena arena("cpu", chunks.alloc(), chunks.free(), options(4096, ArenaOptions::Growth::kExact));
  void* a = must(arena.allocate(4096));
  arena.free(a);
  void* b = must(arena.allocate(4096));
  EXPECT_EQ(a, b);
  EXPECT_EQ(arena.stats().chunk_count, 1);
  EXPECT_EQ(chunks.live_chunks(), 1);
  EXPECT_EQ(arena.stats().allocations, 2);
}

TEST(ArenaTest, BestFitTakesSmallestFreeBlockThatFits) {
  CountingChunks chunks;
  Arena arena("cpu", chunks.alloc(), chunks.free(), options(1 << 20));
  // Separators keep the freed blocks from merging with each other or the tail.
  void* big = must(arena.allocate(4096));
  void* sep1 = must(arena.allocate(64));
  void* small = must(arena.allocate(1024));
  void* sep2 = must(arena.allocate(64));
  arena.free(big);
  arena.free(small);
  EXPECT_EQ(must(arena.allocate(900)), small);
  // The rest of the 1 KiB block (1024 - 960) was split off; a 4 KiB request still finds `big`.
  EXPECT_EQ(must(arena.allocate(4000)), big);
  EXPECT_EQ(arena.stats().chunk_count, 1);
  (void)sep1;
  (void)sep2;
}

TEST(ArenaTest, NeighboursMergeInAnyFreeOrder) {
  const std::vector<std::vector<int>> orders = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  for (const auto& order : orders) {
    CountingChunks chunks;
    Arena arena("cpu", chunks.alloc(), chunks.free(), options(3 * 1024, ArenaOptions::Growth::kExact));
    void* blocks[3] = {must(arena.allocate(1024)), must(arena.allocate(1024)), must(arena.allocate(1024))};
    EXPECT_EQ(static_cast<char*>(blocks[1]), static_cast<char*>(blocks[0]) + 1024);
    EXPECT_EQ(static_cast<char*>(blocks[2]), static_cast<char*>(blocks[1]) + 1024);
    for (int i : order) arena.free(blocks[i]);
    EXPECT_EQ(must(arena.allocate(3 * 1024)), blocks[0]) << order[0] << order[1] << order[2];
    EXPECT_EQ(arena.stats().chunk_count, 1);
    EXPECT_EQ(chunks.live_chunks(), 1);
  }
}

TEST(ArenaTest, ChunksNeverMergeWithEachOther) {
  CountingChunks chunks;
  Arena arena("cpu", chunks.alloc(), chunks.free(), options(1024, ArenaOptions::Growth::kExact));
  void* a = must(arena.allocate(1024));
  void* b = must(arena.allocate(1024));
  arena.free(a);
  arena.free(b);
  must(arena.allocate(2048));  // two free 1 KiB chunks do not make a 2 KiB block
  EXPECT_EQ(arena.stats().chunk_count, 3);
}

TEST(ArenaTest, GrowthDoubleChunkSizes) {
  CountingChunks chunks;
  Arena arena("cpu", chunks.alloc(), chunks.free(), options(1024, ArenaOptions::Growth::kDouble));
  must(arena.allocate(1024));   // first chunk: 1024
  must(arena.allocate(1024));   // 2 x 1024
  must(arena.allocate(3000));   // 1024 left over does not fit 3008: 2 x 2048
  must(arena.allocate(10000));  // request (10048) beats 2 x 4096
  EXPECT_EQ(chunks.granted(), (std::vector<int64_t>{1024, 2048, 4096, 10048}));
  EXPECT_EQ(arena.stats().reserved_bytes, 1024 + 2048 + 4096 + 10048);
}

TEST(ArenaTest, GrowthExactChunkSizes) {
  CountingChunks chunks;
  Arena arena("cpu", chunks.alloc(), chunks.free(), options(1024, ArenaOptions::Growth::kExact));
  must(arena.allocate(1024));  // first chunk: initial_chunk_bytes
  must(arena.allocate(1024));
  must(arena.allocate(3000));  // rounded to the alignment
  must(arena.allocate(100));
  EXPECT_EQ(chunks.granted(), (std::vector<int64_t>{1024, 1024, 3008, 128}));
}

TEST(ArenaTest, FirstChunkIsAtLeastTheRequest) {
  CountingChunks chunks;
  Arena arena("cpu", chunks.alloc(), chunks.free(), options(1024));
  must(arena.allocate(5000));
  EXPECT_EQ(chunks.granted(), (std::vector<int64_t>{5056}));
}

TEST(ArenaTest, DoublingIsCappedByTheLimit) {
  CountingChunks chunks;
  Arena arena("cpu", chunks.alloc(), chunks.free(), options(1024, ArenaOptions::Growth::kDouble, 5000));
  must(arena.allocate(1024));  // 1024
  must(arena.allocate(1500));  // max(1536, 2048)
  must(arena.allocate(1024));  // wants 4096, only 1928 left: 1920 (aligned down)
  EXPECT_EQ(chunks.granted(), (std::vector<int64_t>{1024, 2048, 1920}));
}

TEST(ArenaTest, LimitRefusesWithOutOfMemoryAndStaysUsable) {
  CountingChunks chunks;
  Arena arena("cpu", chunks.alloc(), chunks.free(), options(1 << 20, ArenaOptions::Growth::kDouble, 1 << 20));
  void* a = must(arena.allocate(1000000));
  Expected<void*> refused = arena.allocate(100000);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.status().code(), StatusCode::kOutOfMemory);
  EXPECT_EQ(refused.status().message(),
            "arena 'cpu': cannot allocate 100000 bytes: limit 1048576 bytes, 1048576 reserved, 1000000 in use");
  EXPECT_EQ(arena.stats().failed_allocations, 1);
  EXPECT_EQ(arena.stats().allocations, 1);
  EXPECT_FALSE(arena.allocate(int64_t{1} << 21).has_value());  // larger than the limit itself
  EXPECT_EQ(arena.stats().failed_allocations, 2);
  // Still usable: the remainder of the chunk serves small requests, and after freeing, the whole limit.
  void* b = must(arena.allocate(1000));
  arena.free(a);
  arena.free(b);
  must(arena.allocate(1 << 20));
  EXPECT_EQ(arena.stats().chunk_count, 1);
  EXPECT_EQ(chunks.live_chunks(), 1);
}

TEST(ArenaTest, AllocateShrinksEmptyChunksToMakeRoom) {
  CountingChunks chunks;
  Arena arena("cpu", chunks.alloc(), chunks.free(), options(1 << 20, ArenaOptions::Growth::kExact, 2 << 20));
  void* a = must(arena.allocate(1 << 20));
  void* b = must(arena.allocate(1 << 20));
  arena.free(a);
  arena.free(b);
  EXPECT_EQ(arena.stats().reserved_bytes, 2 << 20);  // empty chunks are kept until needed
  // Neither chunk fits 2 MiB and the limit is reached: allocate releases both, then reserves one.
  void* c = must(arena.allocate(2 << 20));
  EXPECT_NE(c, nullptr);
  EXPECT_EQ(arena.stats().chunk_count, 1);
  EXPECT_EQ(arena.stats().reserved_bytes, 2 << 20);
  EXPECT_EQ(chunks.live_chunks(), 1);
}

TEST(ArenaTest, ShrinkReleasesExactlyTheEmptyChunks) {
  CountingChunks chunks;
  Arena arena("cpu", chunks.alloc(), chunks.free(), options(2048, ArenaOptions::Growth::kExact));
  void* x = must(arena.allocate(1024));  // chunk 1 (2048): x, y
  void* y = must(arena.allocate(1024));
  void* b = must(arena.allocate(1024));  // chunk 2 (1024)
  void* c = must(arena.allocate(1024));  // chunk 3 (1024)
  arena.free(x);                         // chunk 1 half empty: kept
  arena.free(c);                         // chunk 3 empty: released
  EXPECT_EQ(arena.shrink(), 1024);
  EXPECT_EQ(arena.stats().chunk_count, 2);
  EXPECT_EQ(arena.stats().reserved_bytes, 2048 + 1024);
  EXPECT_EQ(chunks.live_chunks(), 2);
  EXPECT_EQ(chunks.live_bytes(), 2048 + 1024);
  EXPECT_EQ(arena.shrink(), 0);
  arena.free(y);
  arena.free(b);
  EXPECT_EQ(arena.shrink(), 2048 + 1024);
  EXPECT_EQ(arena.stats().chunk_count, 0);
  EXPECT_EQ(arena.stats().reserved_bytes, 0);
  EXPECT_EQ(chunks.live_chunks(), 0);
  must(arena.allocate(10));  // usable after a full shrink
  EXPECT_EQ(chunks.live_chunks(), 1);
}

TEST(ArenaTest, PeakStatsAndResetPeak) {
  CountingChunks chunks;
  Arena arena("cpu", chunks.alloc(), chunks.free(), options(4096, ArenaOptions::Growth::kExact));
  void* a = must(arena.allocate(4096));
  void* b = must(arena.allocate(1000));  // rounded to 1024, new chunk
  ArenaStats s = arena.stats();
  EXPECT_EQ(s.in_use_bytes, 4096 + 1024);
  EXPECT_EQ(s.peak_in_use_bytes, 4096 + 1024);
  EXPECT_EQ(s.peak_reserved_bytes, 4096 + 1024);
  arena.free(a);
  arena.free(b);
  arena.shrink();
  s = arena.stats();
  EXPECT_EQ(s.in_use_bytes, 0);
  EXPECT_EQ(s.reserved_bytes, 0);
  EXPECT_EQ(s.peak_in_use_bytes, 4096 + 1024);
  EXPECT_EQ(s.peak_reserved_bytes, 4096 + 1024);
  void* c = must(arena.allocate(64));
  arena.reset_peak();
  s = arena.stats();
  EXPECT_EQ(s.peak_in_use_bytes, 64);
  EXPECT_EQ(s.peak_reserved_bytes, 64);
  arena.free(c);
  EXPECT_EQ(arena.stats().peak_in_use_bytes, 64);
}

TEST(ArenaTest, DestructorReturnsEveryChunk) {
  CountingChunks chunks;
  {
    Arena arena("cpu", chunks.alloc(), chunks.free(), options(1024, ArenaOptions::Growth::kExact));
    for (int i = 0; i < 5; ++i) must(arena.allocate(1024));  // left in use on purpose
    EXPECT_EQ(chunks.live_chunks(), 5);
  }
  EXPECT_EQ(chunks.live_chunks(), 0);
  EXPECT_EQ(chunks.live_bytes(), 0);
}

TEST(ArenaTest, ZeroByteAllocationsAreUniqueMinimalBlocks) {
  CountingChunks chunks;
  Arena arena("cpu", chunks.alloc(), chunks.free(), options(4096));
  std::set<void*> seen;
  for (int i = 0; i < 10; ++i) {
    void* p = must(arena.allocate(0));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % kArenaAlignment, 0u);
    EXPECT_TRUE(seen.insert(p).second);
  }
  EXPECT_EQ(arena.stats().in_use_bytes, 10 * kArenaAlignment);
  for (void* p : seen) arena.free(p);
  EXPECT_EQ(arena.stats().in_use_bytes, 0);
}

TEST(ArenaTest, FreeOfNullOrForeignPointerIsIgnored) {
  CountingChunks chunks;
  Arena arena("cpu", chunks.alloc(), chunks.free(), options(4096));
  void* a = must(arena.allocate(256));
  const ArenaStats before = arena.stats();
  int local = 0;
  arena.free(nullptr);
  arena.free(&local);
  arena.free(static_cast<char*>(a) + 64);  // interior pointer
  EXPECT_EQ(arena.ignored_frees(), 2);
  EXPECT_EQ(arena.stats().in_use_bytes, before.in_use_bytes);
  arena.free(a);
  arena.free(a);  // double free
  EXPECT_EQ(arena.ignored_frees(), 3);
  EXPECT_EQ(arena.stats().in_use_bytes, 0);
  EXPECT_EQ(must(arena.allocate(4096)), a);  // the chunk merged back whole
}

TEST(ArenaTest, NegativeSizeIsInvalidArgument) {
  CountingChunks chunks;
  Arena arena("cpu", chunks.alloc(), chunks.free());
  Expected<void*> r = arena.allocate(-1);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(arena.stats().failed_allocations, 1);
  EXPECT_EQ(chunks.live_chunks(), 0);
}

TEST(ArenaTest, ChunkAllocatorFailureFallsBackThenFails) {
  CountingChunks chunks;
  chunks.refuse_above = 8192;
  Arena arena("gpu0", chunks.alloc(), chunks.free(), options(1 << 20));
  // The 1 MiB first chunk is refused; an exact-size chunk is not.
  void* a = must(arena.allocate(4096));
  EXPECT_EQ(chunks.granted(), (std::vector<int64_t>{4096}));
  Expected<void*> r = arena.allocate(16384);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.status().code(), StatusCode::kOutOfMemory);
  EXPECT_NE(r.status().message().find("arena 'gpu0'"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("16384"), std::string::npos) << r.status().message();
  EXPECT_EQ(arena.stats().failed_allocations, 1);
  arena.free(a);
  EXPECT_EQ(arena.stats().chunk_count, 1);  // a failure leaves held chunks alone unless they were empty
}

TEST(ArenaTest, HugeRequestFailsCleanly) {
  CountingChunks chunks;
  Arena arena("cpu", chunks.alloc(), chunks.free());
  Expected<void*> r = arena.allocate(std::numeric_limits<int64_t>::max());
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.status().code(), StatusCode::kOutOfMemory);
}

TEST(ArenaTest, ConcurrentAllocateFreeKeepsBlocksDisjoint) {
  CountingChunks chunks;
  Arena arena("cpu", chunks.alloc(), chunks.free(), options(64 * 1024));
  constexpr int kThreads = 8;
  constexpr int kPairs = 2000;
  std::atomic<int> errors{0};
  std::mutex live_mu;
  std::map<char*, int64_t> live;  // every block in use by any thread, to detect overlap

  auto worker = [&](int tid) {
    std::mt19937 rng(1000 + tid);
    struct Held {
      unsigned char* p;
      int64_t n;
      unsigned char pattern;
    };
    std::vector<Held> held;
    int allocated = 0;
    auto release = [&](size_t i) {
      Held h = held[i];
      for (int64_t k = 0; k < h.n; ++k)
        if (h.p[k] != h.pattern) {
          ++errors;
          break;
        }
      {
        std::lock_guard<std::mutex> lock(live_mu);
        live.erase(reinterpret_cast<char*>(h.p));
      }
      arena.free(h.p);
      held[i] = held.back();
      held.pop_back();
    };
    while (allocated < kPairs || !held.empty()) {
      const bool do_alloc = allocated < kPairs && (held.empty() || rng() % 2 == 0);
      if (!do_alloc) {
        release(rng() % held.size());
        continue;
      }
      const int64_t n = std::uniform_int_distribution<int64_t>(0, 8192)(rng);
      Expected<void*> e = arena.allocate(n);
      if (!e.has_value()) {
        ++errors;
        return;
      }
      auto* p = static_cast<unsigned char*>(*e);
      if (reinterpret_cast<uintptr_t>(p) % kArenaAlignment != 0) ++errors;
      {
        std::lock_guard<std::mutex> lock(live_mu);
        char* c = reinterpret_cast<char*>(p);
        const int64_t span = std::max<int64_t>(n, 1);
        auto next = live.lower_bound(c);
        if (next != live.end() && next->first < c + span) ++errors;
        if (next != live.begin() && std::prev(next)->first + std::prev(next)->second > c) ++errors;
        live[c] = span;
      }
      const auto pattern = static_cast<unsigned char>(tid * 31 + allocated);
      std::memset(p, pattern, static_cast<size_t>(n));
      held.push_back({p, n, pattern});
      ++allocated;
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);
  for (auto& t : threads) t.join();

  EXPECT_EQ(errors.load(), 0);
  const ArenaStats s = arena.stats();
  EXPECT_EQ(s.in_use_bytes, 0);
  EXPECT_EQ(s.allocations, kThreads * kPairs);
  EXPECT_EQ(s.failed_allocations, 0);
  EXPECT_EQ(arena.ignored_frees(), 0);
  EXPECT_EQ(arena.shrink(), s.reserved_bytes);  // everything merged back into whole, empty chunks
  EXPECT_EQ(chunks.live_chunks(), 0);
}

}  // namespace
}  // namespace loom::memory
