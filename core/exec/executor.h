// The sequential executor: launches a plan's steps in order with a fresh
// per-run state, so any number of runs may execute one plan concurrently.
// Steps on asynchronous streams complete later; the plan's events and final
// barrier order them (see execution_plan.h).
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "exec/execution_plan.h"
#include "plugin_host/abi_objects.h"

namespace loom::exec {

// What one run needs besides its values: an arena per memory kind (sized
// by the memory plan), a stream per asynchronous stream of the plan and the
// plan's events. Made by the EPs' allocators and create_stream/create_event.
struct RunResources {
  std::vector<void*> arenas;          // base pointer per memory kind (NULL when empty)
  std::vector<LOOM_Stream*> streams;  // per plan stream; NULL for the host
  std::vector<LOOM_Event*> events;    // per plan event
};

// Recycles RunResources across runs, so steady-state runs allocate nothing
// for planned buffers and make no streams or events. Thread-safe; must be
// destroyed before the plan and the EPs.
class RunResourcePool {
 public:
  RunResourcePool(const ExecutionPlan& plan, const std::vector<plugin_host::EpInstance*>& eps)
      : plan_(plan), eps_(eps) {}
  ~RunResourcePool();
  Expected<std::unique_ptr<RunResources>> acquire();
  // `resources` must be idle: every stream synchronized.
  void release(std::unique_ptr<RunResources> resources);

 private:
  void destroy(RunResources& r);
  const ExecutionPlan& plan_;
  std::vector<plugin_host::EpInstance*> eps_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<RunResources>> free_;
};

using ValuePtr = std::unique_ptr<LOOM_Value>;

// Runs the plan once. `inputs` are bound by name (validated by the caller)
// and borrowed for the run; returns new host values for `outputs` (slots from
// plan.outputs).
// `cancel` (may be NULL): when it becomes true the run stops before its next
// step (and subgraph runs before theirs) with StatusCode::kCancelled.
Expected<std::vector<ValuePtr>> execute(const ExecutionPlan& plan, const std::vector<plugin_host::EpInstance*>& eps,
                                        const std::map<std::string, const LOOM_Value*>& inputs,
                                        const std::vector<SlotId>& outputs, RunResourcePool& pool,
                                        const std::atomic<bool>* cancel = nullptr);

}  // namespace loom::exec
