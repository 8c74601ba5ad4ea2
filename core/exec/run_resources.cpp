#include "exec/run_resources.h"

#include <cstdlib>

#include "plugin_host/abi_objects.h"

namespace loom::exec {
DeviceConstants::~DeviceConstants() {
  for (auto& [slot, e] : entries)
    if (e.data != nullptr) e.arena->free(e.data);
}

RunResourcePool::~RunResourcePool() {
  for (auto& r : free_) destroy(*r);
}

void RunResourcePool::destroy(RunResources& r) {
  for (size_t m = 0; m < r.planned.size(); ++m)
    if (r.planned[m] != nullptr) r.arenas[m]->free(r.planned[m]);
  for (LOOM_Event* e : r.events)
    if (e != nullptr) e->release(e);
  for (auto& stream_events : r.timing_events)
    for (LOOM_Event* e : stream_events) e->release(e);
  for (LOOM_Stream* s : r.streams)
    if (s != nullptr) s->release(s);
  r = RunResources{};
}

// The planned buffers, when a shrinking release gave them back.
Status RunResourcePool::reserve_planned(RunResources& r) {
  for (size_t m = 0; m < plan_.memories.size(); ++m) {
    const int64_t bytes = plan_.memories[m].arena_bytes;
    if (bytes == 0 || r.planned[m] != nullptr) continue;
    auto block = r.arenas[m]->allocate(bytes);
    if (!block) return block.status().with_context("planned buffers of the run");
    r.planned[m] = *block;
  }
  return Status::ok();
}

Expected<std::unique_ptr<RunResources>> RunResourcePool::acquire() {
  std::unique_ptr<RunResources> r;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!free_.empty()) {
      r = std::move(free_.back());
      free_.pop_back();
    }
  }
  Status status;
  if (!r) {
    r = std::make_unique<RunResources>();
    r->constants = &constants_;
    r->host_constants = host_constants_.get();
    r->shape_warnings = &shape_warnings_;
    r->planned.assign(plan_.memories.size(), nullptr);
    for (const MemoryKind& m : plan_.memories) r->arenas.push_back(&arenas_.arena(m.info, m.allocator));
    r->streams.assign(plan_.streams.size(), nullptr);
    r->events.assign(plan_.events.size(), nullptr);
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
  }
  if (status.is_ok()) status = reserve_planned(*r);
  if (!status) {
    destroy(*r);
    return status;
  }
  return r;
}

void RunResourcePool::release(std::unique_ptr<RunResources> resources) {
  const bool shrink = arenas_.shrink_after_run();
  if (shrink)
    for (size_t m = 0; m < resources->planned.size(); ++m)
      if (resources->planned[m] != nullptr) {
        resources->arenas[m]->free(resources->planned[m]);
        resources->planned[m] = nullptr;
      }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(std::move(resources));
  }
  if (shrink) arenas_.shrink();
}

}  // namespace loom::exec
