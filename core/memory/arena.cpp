#include "memory/arena.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>

namespace loom::memory {
namespace {

constexpr int64_t kMaxRequest = std::numeric_limits<int64_t>::max() / 4;  // keeps rounding and doubling overflow-free

int64_t round_up(int64_t bytes) { return (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment; }
int64_t round_down(int64_t bytes) { return bytes / kArenaAlignment * kArenaAlignment; }

}  // namespace

Arena::Arena(std::string name, ChunkAlloc alloc, ChunkFree free, ArenaOptions options)
    : name_(std::move(name)), chunk_alloc_(std::move(alloc)), chunk_free_(std::move(free)), options_(options) {}

Arena::~Arena() {
  // Blocks still in use are abandoned: their chunks go back regardless, so an
  // arena never leaks device memory past its own lifetime.
  for (auto& [base, chunk] : chunks_) chunk_free_(base);
}

Expected<void*> Arena::allocate(int64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  if (bytes < 0) {
    ++stats_.failed_allocations;
    return invalid_argument("arena '" + name_ + "': cannot allocate " + std::to_string(bytes) + " bytes");
  }
  if (bytes > kMaxRequest) {
    ++stats_.failed_allocations;
    return out_of_memory(bytes, "request too large");
  }
  // Zero-byte requests still get a distinct minimal block, so the pointer is unique.
  const int64_t rounded = std::max(kArenaAlignment, round_up(bytes));

  auto fit = free_.lower_bound({rounded, nullptr});
  if (fit == free_.end()) {
    // Nothing fits: grow. The planned chunk may be refused by the limit or by
    // the chunk allocator; an exact-size chunk may still succeed, and
    // releasing empty chunks may make room for either.
    bool reserved = false;
    for (int pass = 0; pass < 2 && !reserved; ++pass) {
      if (pass == 1 && shrink_locked() == 0) break;
      const int64_t planned = next_chunk_bytes(rounded);
      reserved = reserve_chunk(planned) || (planned != rounded && reserve_chunk(rounded));
    }
    if (!reserved) {
      ++stats_.failed_allocations;
      const bool over_limit = options_.limit_bytes > 0 && rounded > options_.limit_bytes - stats_.reserved_bytes;
      return out_of_memory(bytes, over_limit ? "" : "chunk allocator could not reserve " + std::to_string(rounded) + " bytes");
    }
    fit = free_.lower_bound({rounded, nullptr});
  }
  return take_block(blocks_.find(fit->second), rounded);
}

void Arena::free(void* p) {
  if (p == nullptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = blocks_.find(static_cast<char*>(p));
  if (it == blocks_.end() || !it->second.in_use) {
    // Not ours (or already freed): ignoring it keeps the arena consistent,
    // where trusting it would corrupt the block lists.
    ++ignored_frees_;
    return;
  }
  Block& block = it->second;
  block.in_use = false;
  --chunks_[block.chunk].used_blocks;
  stats_.in_use_bytes -= block.size;

  // Merge with the following free block of the same chunk.
  auto next = std::next(it);
  if (next != blocks_.end() && next->second.chunk == block.chunk && !next->second.in_use) {
    free_.erase({next->second.size, next->first});
    block.size += next->second.size;
    blocks_.erase(next);
  }
  // Merge into the preceding free block of the same chunk.
  if (it != blocks_.begin()) {
    auto prev = std::prev(it);
    if (prev->second.chunk == block.chunk && !prev->second.in_use) {
      free_.erase({prev->second.size, prev->first});
      prev->second.size += block.size;
      blocks_.erase(it);
      it = prev;
    }
  }
  free_.insert({it->second.size, it->first});
}

int64_t Arena::shrink() {
  std::lock_guard<std::mutex> lock(mu_);
  return shrink_locked();
}

ArenaStats Arena::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void Arena::reset_peak() {
  std::lock_guard<std::mutex> lock(mu_);
  stats_.peak_in_use_bytes = stats_.in_use_bytes;
  stats_.peak_reserved_bytes = stats_.reserved_bytes;
}

int64_t Arena::ignored_frees() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ignored_frees_;
}

int64_t Arena::next_chunk_bytes(int64_t request) const {
  int64_t want = request;
  if (last_chunk_bytes_ == 0) {
    want = std::max(request, round_up(std::clamp<int64_t>(options_.initial_chunk_bytes, 0, kMaxRequest)));
  } else if (options_.growth == ArenaOptions::Growth::kDouble) {
    want = std::max(request, 2 * last_chunk_bytes_);
  }
  // Never plan past the limit when the request itself fits under it.
  if (options_.limit_bytes > 0) {
    const int64_t room = round_down(options_.limit_bytes - stats_.reserved_bytes);
    if (want > room) want = std::max(request, room);
  }
  return want;
}

bool Arena::reserve_chunk(int64_t bytes) {
  if (options_.limit_bytes > 0 && bytes > options_.limit_bytes - stats_.reserved_bytes) return false;
  void* raw = nullptr;
  try {
    raw = chunk_alloc_(static_cast<uint64_t>(bytes), static_cast<uint64_t>(kArenaAlignment));
  } catch (...) {
    return false;  // a throwing allocator is treated like one that returns NULL
  }
  if (raw == nullptr) return false;
  char* base = static_cast<char*>(raw);
  if (reinterpret_cast<uintptr_t>(base) % kArenaAlignment != 0) {
    chunk_free_(base);  // the allocator broke its contract; every block offset relies on it
    return false;
  }
  chunks_[base] = Chunk{bytes, 0};
  blocks_[base] = Block{bytes, base, false};
  free_.insert({bytes, base});
  last_chunk_bytes_ = bytes;
  stats_.reserved_bytes += bytes;
  stats_.peak_reserved_bytes = std::max(stats_.peak_reserved_bytes, stats_.reserved_bytes);
  ++stats_.chunk_count;
  return true;
}

int64_t Arena::shrink_locked() {
  // A chunk with no block in use has merged back into one free block at its base.
  int64_t released = 0;
  for (auto it = chunks_.begin(); it != chunks_.end();) {
    if (it->second.used_blocks != 0) {
      ++it;
      continue;
    }
    char* base = it->first;
    const int64_t size = it->second.size;
    free_.erase({size, base});
    blocks_.erase(base);
    chunk_free_(base);
    stats_.reserved_bytes -= size;
    --stats_.chunk_count;
    released += size;
    it = chunks_.erase(it);
  }
  return released;
}

void* Arena::take_block(std::map<char*, Block>::iterator it, int64_t bytes) {
  Block& block = it->second;
  free_.erase({block.size, it->first});
  if (block.size > bytes) {
    // Both sizes are multiples of the alignment, so the remainder is a valid aligned block.
    char* rest = it->first + bytes;
    blocks_[rest] = Block{block.size - bytes, block.chunk, false};
    free_.insert({block.size - bytes, rest});
    block.size = bytes;
  }
  block.in_use = true;
  ++chunks_[block.chunk].used_blocks;
  stats_.in_use_bytes += bytes;
  stats_.peak_in_use_bytes = std::max(stats_.peak_in_use_bytes, stats_.in_use_bytes);
  ++stats_.allocations;
  return it->first;
}

Status Arena::out_of_memory(int64_t request, const std::string& why) const {
  std::string message = "arena '" + name_ + "': cannot allocate " + std::to_string(request) + " bytes: ";
  if (!why.empty()) message += why + " (";
  message += options_.limit_bytes > 0 ? "limit " + std::to_string(options_.limit_bytes) + " bytes" : "no limit";
  message += ", " + std::to_string(stats_.reserved_bytes) + " reserved, " + std::to_string(stats_.in_use_bytes) + " in use";
  if (!why.empty()) message += ")";
  return Status(StatusCode::kOutOfMemory, message);
}

}  // namespace loom::memory
