#include "memory/memory_planner.h"

#include <algorithm>
#include <map>

namespace loom::memory {
namespace {

int64_t align_up(int64_t n) { return (n + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment; }

// Free space inside [0, end) as offset -> size, adjacent blocks merged.
class FreeList {
 public:
  int64_t take(int64_t bytes, int64_t& end) {
    auto best = blocks_.end();
    for (auto it = blocks_.begin(); it != blocks_.end(); ++it)
      if (it->second >= bytes && (best == blocks_.end() || it->second < best->second)) best = it;
    if (best != blocks_.end()) {
      const int64_t off = best->first, size = best->second;
      blocks_.erase(best);
      if (size > bytes) blocks_[off + bytes] = size - bytes;
      return off;
    }
    // Grow the arena, extending a free block that touches the end if any.
    if (!blocks_.empty()) {
      auto last = std::prev(blocks_.end());
      if (last->first + last->second == end) {
        const int64_t off = last->first;
        blocks_.erase(last);
        end = off + bytes;
        return off;
      }
    }
    const int64_t off = end;
    end += bytes;
    return off;
  }
  void give(int64_t off, int64_t bytes) {
    auto it = blocks_.emplace(off, bytes).first;
    auto next = std::next(it);
    if (next != blocks_.end() && it->first + it->second == next->first) {
      it->second += next->second;
      blocks_.erase(next);
    }
    if (it != blocks_.begin()) {
      auto prev = std::prev(it);
      if (prev->first + prev->second == it->first) {
        prev->second += it->second;
        blocks_.erase(it);
      }
    }
  }

 private:
  std::map<int64_t, int64_t> blocks_;
};

}  // namespace

MemoryPlan plan_memory(const std::vector<BufferRequest>& requests) {
  MemoryPlan plan;
  plan.offsets.assign(requests.size(), -1);
  int last = 0;
  for (const BufferRequest& r : requests) last = std::max(last, std::max(r.first_step, r.last_step));
  std::vector<std::vector<size_t>> born(last + 1), dies(last + 1);
  for (size_t i = 0; i < requests.size(); ++i) {
    born[requests[i].first_step].push_back(i);
    dies[std::max(requests[i].first_step, requests[i].last_step)].push_back(i);
  }
  FreeList free;
  int64_t end = 0;
  for (int step = 0; step <= last; ++step) {
    // Larger buffers first packs better.
    std::sort(born[step].begin(), born[step].end(),
              [&](size_t a, size_t b) { return requests[a].bytes > requests[b].bytes; });
    for (size_t i : born[step]) plan.offsets[i] = free.take(align_up(std::max<int64_t>(requests[i].bytes, 1)), end);
    for (size_t i : dies[step]) free.give(plan.offsets[i], align_up(std::max<int64_t>(requests[i].bytes, 1)));
  }
  plan.arena_bytes = end;
  return plan;
}

}  // namespace loom::memory
