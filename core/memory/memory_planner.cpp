#include "memory/memory_planner.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

namespace loom::memory {
namespace {

int64_t align_up(int64_t n) { return (n + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment; }

// Free space inside [0, end) as offset -> size, adjacent blocks merged, also
// ordered by (size, offset) so the best fit is a lookup, not a scan (a plan
// may hold as many free blocks as the graph has values).
class FreeList {
 public:
  // The smallest block that fits (the lowest offset among equals), else
  // the arena's end, grown.
  int64_t take(int64_t bytes, int64_t& end) {
    auto best = by_size_.lower_bound({bytes, std::numeric_limits<int64_t>::min()});
    if (best != by_size_.end()) {
      const int64_t size = best->first, off = best->second;
      erase(off);
      if (size > bytes) insert(off + bytes, size - bytes);
      return off;
    }
    // Grow the arena, extending a free block that touches the end if any.
    if (!blocks_.empty()) {
      auto last = std::prev(blocks_.end());
      if (last->first + last->second == end) {
        const int64_t off = last->first;
        erase(off);
        end = off + bytes;
        return off;
      }
    }
    const int64_t off = end;
    end += bytes;
    return off;
  }
  void give(int64_t off, int64_t bytes) {
    auto next = blocks_.lower_bound(off);
    if (next != blocks_.end() && off + bytes == next->first) {
      bytes += next->second;
      erase(next->first);
    }
    auto after = blocks_.lower_bound(off);
    if (after != blocks_.begin()) {
      auto prev = std::prev(after);
      if (prev->first + prev->second == off) {
        off = prev->first;
        bytes += prev->second;
        erase(off);
      }
    }
    insert(off, bytes);
  }

 private:
  void insert(int64_t off, int64_t bytes) {
    blocks_.emplace(off, bytes);
    by_size_.emplace(bytes, off);
  }
  void erase(int64_t off) {
    auto it = blocks_.find(off);
    by_size_.erase({it->second, off});
    blocks_.erase(it);
  }

  std::map<int64_t, int64_t> blocks_;            // offset -> size
  std::set<std::pair<int64_t, int64_t>> by_size_;  // (size, offset)
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
