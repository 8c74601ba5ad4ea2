// What one run needs besides its values, recycled across runs.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "exec/constant_store.h"
#include "exec/execution_plan.h"
#include "memory/memory_arenas.h"
#include "plugin_host/abi_objects.h"

namespace loom::exec {

// Initializers copied into device memory once per session (Step::
// constant_copy): the buffer and a value viewing it, by the copy's output
// slot. Shared by every run of the plan; thread-safe.
class DeviceConstants {
 public:
  ~DeviceConstants();
  std::mutex mutex;
  struct Entry {
    memory::Arena* arena = nullptr;
    void* data = nullptr;
    std::unique_ptr<LOOM_Value> value;
    int users = 0;          // runs that bound it and have not ended
    bool released = false;  // its reader packed it (kernel_release_constant_input): freed when unused
  };
  std::map<SlotId, Entry> entries;  // guarded by mutex
};

// Values whose made shape contradicted the model's declaration: warned
// about once per plan, not once per run. Thread-safe.
class ShapeWarnings {
 public:
  // True the first time it is asked for `slot`.
  bool first(SlotId slot) {
    std::lock_guard<std::mutex> lock(mutex_);
    return slots_.insert(slot).second;
  }

 private:
  std::mutex mutex_;
  std::set<SlotId> slots_;
};

// The planned buffers of each memory kind (one block per kind, sized by the
// memory plan, from the session's arena of that kind), a stream per
// asynchronous stream of the plan and the plan's events (made by the EPs'
// create_stream / create_event), and where unplanned buffers come from.
struct RunResources {
  std::vector<void*> planned;         // per memory kind: base of the planned buffers (NULL when empty)
  std::vector<memory::Arena*> arenas; // per memory kind: the session's arena
  std::vector<LOOM_Stream*> streams;  // per plan stream; NULL for the host
  std::vector<LOOM_Event*> events;    // per plan event
  std::vector<std::vector<LOOM_Event*>> timing_events;  // per stream, made as profiling needs them
  DeviceConstants* constants = nullptr;  // the pool's, shared by every run
  ConstantStore* host_constants = nullptr;  // the pool's: the plan's initializers
  ShapeWarnings* shape_warnings = nullptr;  // the pool's
};

// Recycles RunResources across runs, so steady-state runs allocate nothing
// for planned buffers and make no streams or events. Thread-safe; must be
// destroyed before the plan and the EPs.
class RunResourcePool {
 public:
  // `arenas` must outlive the pool; `host_constants` are the plan's
  // initializers (ConstantStore::take / share).
  RunResourcePool(const ExecutionPlan& plan, const std::vector<plugin_host::EpInstance*>& eps,
                  memory::MemoryArenas& arenas, std::unique_ptr<ConstantStore> host_constants)
      : plan_(plan), eps_(eps), arenas_(arenas), host_constants_(std::move(host_constants)) {}
  ~RunResourcePool();
  Expected<std::unique_ptr<RunResources>> acquire();
  // `resources` must be idle: every stream synchronized. With
  // shrink_after_run their planned buffers and every idle chunk go back to
  // the devices (streams and events are kept).
  void release(std::unique_ptr<RunResources> resources);

 private:
  void destroy(RunResources& r);
  Status reserve_planned(RunResources& r);
  const ExecutionPlan& plan_;
  std::vector<plugin_host::EpInstance*> eps_;
  memory::MemoryArenas& arenas_;
  DeviceConstants constants_;  // released before the arenas it came from
  std::unique_ptr<ConstantStore> host_constants_;
  ShapeWarnings shape_warnings_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<RunResources>> free_;
};

}  // namespace loom::exec
