#include "exec/run_resources.h"

#include <cstdlib>

#include "memory/memory_planner.h"
#include "plugin_host/abi_objects.h"

namespace loom::exec {
namespace {

void* host_alloc(int64_t bytes) {
  const size_t a = static_cast<size_t>(memory::kBufferAlignment);
  return std::aligned_alloc(a, (static_cast<size_t>(bytes) + a - 1) / a * a);
}

}  // namespace

RunResourcePool::~RunResourcePool() {
  for (auto& r : free_) destroy(*r);
}

void RunResourcePool::destroy(RunResources& r) {
  for (size_t m = 0; m < r.arenas.size(); ++m) {
    if (r.arenas[m] == nullptr) continue;
    if (m == 0) std::free(r.arenas[m]);
    else plan_.memories[m].allocator->free(plan_.memories[m].allocator->state, r.arenas[m]);
  }
  for (LOOM_Event* e : r.events)
    if (e != nullptr) e->release(e);
  for (LOOM_Stream* s : r.streams)
    if (s != nullptr) s->release(s);
  r = RunResources{};
}

Expected<std::unique_ptr<RunResources>> RunResourcePool::acquire() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!free_.empty()) {
      auto r = std::move(free_.back());
      free_.pop_back();
      return r;
    }
  }
  auto r = std::make_unique<RunResources>();
  r->arenas.assign(plan_.memories.size(), nullptr);
  r->streams.assign(plan_.streams.size(), nullptr);
  r->events.assign(plan_.events.size(), nullptr);
  Status status;
  for (size_t m = 0; status.is_ok() && m < plan_.memories.size(); ++m) {
    const int64_t bytes = plan_.memories[m].arena_bytes;
    if (bytes == 0) continue;
    if (m == 0) {
      r->arenas[m] = host_alloc(bytes);
    } else {
      const LOOM_Allocator* al = plan_.memories[m].allocator;
      r->arenas[m] = al->alloc(al->state, static_cast<uint64_t>(bytes), memory::kBufferAlignment);
    }
    if (r->arenas[m] == nullptr)
      status = Status(StatusCode::kOutOfMemory, "cannot allocate the " + std::to_string(bytes) + "-byte arena for " +
                                                    plugin_host::memory_name(plan_.memories[m].info));
  }
  for (size_t i = 1; status.is_ok() && i < plan_.streams.size(); ++i) {
    auto s = eps_[static_cast<size_t>(plan_.streams[i].ep)]->new_stream();
    if (s) r->streams[i] = *s;
    else status = s.status();
  }
  for (size_t i = 0; status.is_ok() && i < plan_.events.size(); ++i) {
    auto e = eps_[static_cast<size_t>(plan_.streams[plan_.events[i]].ep)]->new_event();
    if (e) r->events[i] = *e;
    else status = e.status();
  }
  if (!status) {
    destroy(*r);
    return status;
  }
  return r;
}

void RunResourcePool::release(std::unique_ptr<RunResources> resources) {
  std::lock_guard<std::mutex> lock(mutex_);
  free_.push_back(std::move(resources));
}

}  // namespace loom::exec
