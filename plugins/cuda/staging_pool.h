// Page-locked host blocks that host <-> device copies are staged through,
// so a copy on a stream never makes the host wait for the device: a
// host-to-device copy is memcpy'd into a block and the DMA from it runs
// later; a device-to-host copy DMAs into a block and a stream callback
// copies it out. A block is reused once the fence (an event recorded after
// the last stream work that touches it) has passed.
//
// This file is the bookkeeping only (which block, when to grow, shrink or
// wait): the CUDA calls come in through Backend, so it is tested on any
// machine (tests/ep/cuda/staging_pool_test.cpp). pinned_transfer.cpp binds
// it to cudaHostAlloc and CUDA events.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace loom::cuda {

struct StagingStats {
  uint64_t held_bytes = 0;      // page-locked bytes the pool holds now
  uint64_t peak_bytes = 0;      // most it ever held
  uint64_t staged_chunks = 0;   // chunks copied through a block
  uint64_t staged_bytes = 0;
  uint64_t unstaged_chunks = 0; // chunks the pool could not take (capacity 0, allocation failed)
  uint64_t waits = 0;           // times a copy waited for a block to come back
  uint64_t blocks_freed = 0;    // blocks given back to make room (shrinking)
};

class StagingPool {
 public:
  // The memory and fences behind the pool. alloc returns nullptr on
  // failure; make_fence returns nullptr on failure; fence_passed does not
  // block; wait_fence blocks until the fence has passed.
  struct Backend {
    std::function<void*(size_t bytes)> alloc;
    std::function<void(void* host)> free;
    std::function<void*()> make_fence;
    std::function<void(void* fence)> destroy_fence;
    std::function<bool(void* fence)> fence_passed;
    std::function<void(void* fence)> wait_fence;
  };

  struct Block {
    void* host = nullptr;
    size_t bytes = 0;
    void* fence = nullptr;
    enum class State { kIdle, kReserved, kInFlight } state = State::kIdle;
    uint64_t sequence = 0;  // order of mark_in_flight, to wait on the oldest
    int waiters = 0;        // acquire calls waiting on its fence (keeps it alive)
  };

  // Blocks are at least kMinBlockBytes and at most `chunk_bytes`; the pool
  // holds at most `capacity_bytes` (0: never stages).
  static constexpr size_t kMinBlockBytes = size_t{64} << 10;
  StagingPool(Backend backend, size_t capacity_bytes, size_t chunk_bytes);
  // Waits for every block in flight, then frees all.
  ~StagingPool();
  StagingPool(const StagingPool&) = delete;
  StagingPool& operator=(const StagingPool&) = delete;

  // Copies are staged in chunks of at most this many bytes.
  size_t chunk_bytes() const { return chunk_bytes_; }

  // A block of at least `bytes` (<= chunk_bytes()) reserved for the caller,
  // who queues its stream work, records the block's fence and calls
  // mark_in_flight, or calls give_back if it queued nothing. Reuses an idle
  // block, else grows within the capacity (first freeing idle blocks too
  // small to serve), else waits for the oldest block in flight. nullptr
  // when the pool cannot stage this chunk at all: the caller copies it
  // without staging.
  Block* acquire(size_t bytes);
  void mark_in_flight(Block* block, size_t bytes);
  void give_back(Block* block);

  // Frees every idle block (a session going quiet gives its pinned memory
  // back to the system).
  void trim();
  StagingStats stats() const;

 private:
  // Blocks in flight whose fence has passed become idle. Under mutex_.
  void collect_passed();
  Block* find_idle(size_t bytes);
  size_t block_size_for(size_t bytes) const;
  void free_block(size_t index);

  Backend backend_;
  size_t capacity_bytes_;
  size_t chunk_bytes_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Block>> blocks_;
  uint64_t next_sequence_ = 0;
  StagingStats stats_;
};

}  // namespace loom::cuda
