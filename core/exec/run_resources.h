// What one run needs besides its values, recycled across runs.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "exec/execution_plan.h"

namespace loom::exec {

// An arena per memory kind (sized by the memory plan), a stream per
// asynchronous stream of the plan and the plan's events. Made by the EPs'
// allocators and create_stream/create_event.
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

}  // namespace loom::exec
