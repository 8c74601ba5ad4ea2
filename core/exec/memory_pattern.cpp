#include "exec/memory_pattern.h"

#include "exec/execution_plan.h"
#include "memory/memory_planner.h"

namespace loom::exec {

MemoryPattern build_memory_pattern(const ExecutionPlan& plan, const std::vector<int64_t>& recorded) {
  MemoryPattern p;
  p.offsets.assign(plan.slots.size(), -1);
  p.bytes.assign(plan.slots.size(), 0);
  p.block_bytes.assign(plan.memories.size(), 0);
  std::vector<std::vector<memory::BufferRequest>> requests(plan.memories.size());
  std::vector<std::vector<size_t>> request_slots(plan.memories.size());
  for (size_t s = 0; s < plan.slots.size() && s < recorded.size(); ++s) {
    const Slot& slot = plan.slots[s];
    if (recorded[s] <= 0 || slot.kind != SlotKind::kIntermediate || slot.produced_at < 0) continue;
    requests[slot.memory].push_back({recorded[s], slot.produced_at, slot.dies_at});
    request_slots[slot.memory].push_back(s);
  }
  for (size_t m = 0; m < plan.memories.size(); ++m) {
    if (requests[m].empty()) continue;
    memory::MemoryPlan mp = memory::plan_memory(requests[m]);
    p.block_bytes[m] = mp.arena_bytes;
    for (size_t i = 0; i < request_slots[m].size(); ++i) {
      p.offsets[request_slots[m][i]] = mp.offsets[i];
      p.bytes[request_slots[m][i]] = requests[m][i].bytes;
    }
  }
  return p;
}

std::shared_ptr<const MemoryPattern> MemoryPatternCache::find(const std::string& signature) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = entries_.begin(); it != entries_.end(); ++it)
    if (it->first == signature) {
      entries_.splice(entries_.begin(), entries_, it);
      return entries_.front().second;
    }
  return nullptr;
}

void MemoryPatternCache::insert(const std::string& signature, std::shared_ptr<const MemoryPattern> pattern) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& e : entries_)
    if (e.first == signature) return;  // another run recorded it first
  entries_.emplace_front(signature, std::move(pattern));
  if (entries_.size() > capacity_) entries_.pop_back();
}

size_t MemoryPatternCache::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

}  // namespace loom::exec
