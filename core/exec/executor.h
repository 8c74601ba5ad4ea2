// The sequential executor: runs a plan's steps in order with a fresh per-run
// state, so any number of runs may execute one plan concurrently.
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

// Arenas (one per memory kind, sized by the memory plan) for runs, recycled
// across runs so steady-state runs allocate nothing for planned buffers.
// Thread-safe.
class ArenaPool {
 public:
  explicit ArenaPool(const ExecutionPlan& plan) : plan_(plan) {}
  ~ArenaPool();
  using Arenas = std::vector<void*>;  // base pointer per memory kind (NULL when empty)
  Expected<std::unique_ptr<Arenas>> acquire();
  void release(std::unique_ptr<Arenas> arenas);

 private:
  void free_arenas(Arenas& a);
  const ExecutionPlan& plan_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<Arenas>> free_;
};

using ValuePtr = std::unique_ptr<LOOM_Value>;

// Runs the plan once. `inputs` are bound by name (validated by the caller)
// and borrowed for the run; returns new host values for `outputs` (slots from
// plan.outputs).
// `cancel` (may be NULL): when it becomes true the run stops before its next
// step (and subgraph runs before theirs) with StatusCode::kCancelled.
Expected<std::vector<ValuePtr>> execute(const ExecutionPlan& plan, const std::vector<plugin_host::EpInstance*>& eps,
                                        const std::map<std::string, const LOOM_Value*>& inputs,
                                        const std::vector<SlotId>& outputs, ArenaPool& pool,
                                        const std::atomic<bool>* cancel = nullptr);

}  // namespace loom::exec
