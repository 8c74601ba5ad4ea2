#include "memory/memory_arenas.h"

#include <cstdlib>

#include "plugin_host/abi_objects.h"

namespace loom::memory {

MemoryArenas::MemoryArenas(const Config& config)
    : limits_mb_(config.arena_limit_mb),
      growth_(config.arena_growth == ArenaGrowth::kExact ? ArenaOptions::Growth::kExact
                                                         : ArenaOptions::Growth::kDouble),
      shrink_after_run_(config.shrink_arenas_after_run) {}

MemoryArenas::~MemoryArenas() = default;

ArenaOptions MemoryArenas::options_for(const std::string& memory) const {
  ArenaOptions o;
  o.growth = growth_;
  auto it = limits_mb_.find(memory);
  if (it == limits_mb_.end()) it = limits_mb_.find("*");
  if (it != limits_mb_.end()) o.limit_bytes = it->second << 20;
  return o;
}

Arena& MemoryArenas::arena(const LOOM_MemoryInfo& memory, const LOOM_Allocator* allocator) {
  const std::string name = plugin_host::memory_name(memory);
  std::lock_guard<std::mutex> lock(mutex_);
  std::unique_ptr<Arena>& a = arenas_[name];
  if (!a) {
    Arena::ChunkAlloc alloc;
    Arena::ChunkFree free;
    if (allocator == nullptr) {
      alloc = [](uint64_t bytes, uint64_t alignment) { return std::aligned_alloc(alignment, bytes); };
      free = [](void* p) { std::free(p); };
    } else {
      alloc = [allocator](uint64_t bytes, uint64_t alignment) {
        return allocator->alloc(allocator->state, bytes, alignment);
      };
      free = [allocator](void* p) { allocator->free(allocator->state, p); };
    }
    a = std::make_unique<Arena>(name, std::move(alloc), std::move(free), options_for(name));
  }
  return *a;
}

std::vector<MemoryArenas::Entry> MemoryArenas::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<Entry> out;
  for (const auto& [name, a] : arenas_) out.push_back(Entry{name, options_for(name).limit_bytes, a->stats()});
  return out;
}

void MemoryArenas::shrink() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [name, a] : arenas_) a->shrink();
}

}  // namespace loom::memory
