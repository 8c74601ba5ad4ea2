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
#include "exec/run_resources.h"
#include "plugin_host/abi_objects.h"

namespace loom::exec {

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
