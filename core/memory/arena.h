// Arena: a thread-safe best-fit allocator over a chunk allocator. The core
// wraps every device allocator (a plugin's alloc/free pair, or
// std::aligned_alloc/std::free for host memory) in one, so that tensors are
// carved out of a few large chunks under a configurable limit instead of
// hitting the device allocator per tensor.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "loom/status.h"

namespace loom::memory {

// Every block the arena hands out starts at a multiple of this, and every
// block size (and chunk size) is rounded up to it.
constexpr int64_t kArenaAlignment = 64;

struct ArenaOptions {
  int64_t limit_bytes = 0;                // most bytes the arena may reserve from its chunk allocator; 0 = no limit
  int64_t initial_chunk_bytes = 1 << 20;  // first chunk (at least the request), for either growth policy
  enum class Growth { kDouble, kExact };  // kDouble: next chunk = max(request, 2 x last chunk), capped by what the limit leaves;
  Growth growth = Growth::kDouble;        // kExact: next chunk = the request rounded up to the alignment
};

struct ArenaStats {
  int64_t reserved_bytes = 0;      // held in chunks now
  int64_t in_use_bytes = 0;        // handed out now (rounded sizes)
  int64_t peak_in_use_bytes = 0;   // high-water mark of in_use_bytes since creation (or reset_peak)
  int64_t peak_reserved_bytes = 0; // high-water mark of reserved_bytes since creation (or reset_peak)
  int64_t chunk_count = 0;
  int64_t allocations = 0;         // successful allocate calls
  int64_t failed_allocations = 0;  // allocate calls refused (limit, chunk allocator failure, bad size)
};

class Arena {
 public:
  using ChunkAlloc = std::function<void*(uint64_t bytes, uint64_t alignment)>;  // NULL on failure
  using ChunkFree = std::function<void(void*)>;

  // `alloc` is always called with alignment kArenaAlignment and a size that
  // is a multiple of it. Both callbacks run under the arena's lock, so they
  // must not call back into this arena.
  Arena(std::string name, ChunkAlloc alloc, ChunkFree free, ArenaOptions options = {});
  // Returns every chunk to ChunkFree, even if blocks are still in use (their
  // pointers dangle afterwards).
  ~Arena();
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  // A block of at least `bytes` aligned to kArenaAlignment. 0 bytes yields a
  // valid, unique pointer to a minimal block (which must be freed as usual).
  // Best fit among the free blocks of all chunks (smallest that fits, lowest
  // address on ties); the remainder is split off as a free block. When none
  // fits a new chunk is reserved per the growth policy; if the limit (or the
  // chunk allocator) refuses, empty chunks are released first and the
  // reservation retried. Otherwise fails with kOutOfMemory and a message
  // naming the arena, the request, the limit, and what is reserved/in use.
  // Negative sizes fail with kInvalidArgument.
  Expected<void*> allocate(int64_t bytes);

  // Returns a block; adjacent free blocks of the same chunk merge (chunks
  // never merge with each other). NULL is a no-op. A pointer the arena did
  // not hand out, or one already freed, is ignored (and counted in
  // ignored_frees()) rather than crashing.
  void free(void* p);

  // Returns chunks with nothing in use to the chunk allocator; returns the
  // bytes released.
  int64_t shrink();

  ArenaStats stats() const;
  // peak_in_use = in_use, peak_reserved = reserved.
  void reset_peak();
  const std::string& name() const { return name_; }
  // How many free() calls were ignored (foreign pointers, double frees).
  int64_t ignored_frees() const;

 private:
  struct Block {
    int64_t size = 0;        // multiple of kArenaAlignment
    char* chunk = nullptr;   // base of the chunk holding it; neighbours merge only within one chunk
    bool in_use = false;
  };
  struct Chunk {
    int64_t size = 0;
    int64_t used_blocks = 0;  // 0 means the chunk is a single free block and may be released
  };
  using FreeKey = std::pair<int64_t, char*>;  // (size, address): best fit, then lowest address

  // All private helpers expect mu_ held.
  int64_t next_chunk_bytes(int64_t request) const;
  bool reserve_chunk(int64_t bytes);
  int64_t shrink_locked();
  void* take_block(std::map<char*, Block>::iterator it, int64_t bytes);
  Status out_of_memory(int64_t request, const std::string& why) const;

  const std::string name_;
  const ChunkAlloc chunk_alloc_;
  const ChunkFree chunk_free_;
  const ArenaOptions options_;

  mutable std::mutex mu_;
  std::map<char*, Block> blocks_;  // every block of every chunk, by address
  std::set<FreeKey> free_;         // the free ones among blocks_
  std::map<char*, Chunk> chunks_;  // by base address
  int64_t last_chunk_bytes_ = 0;   // size of the most recently reserved chunk (for kDouble)
  ArenaStats stats_;
  int64_t ignored_frees_ = 0;
};

}  // namespace loom::memory
