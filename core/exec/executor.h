// The executors: launch a plan's steps with a fresh per-run state, so any
// number of runs may execute one plan concurrently. The sequential executor
// runs steps in plan order on the calling thread; the parallel one runs each
// step once its dependencies (plan.step_graph) are done, on an inter-op pool.
// Steps on asynchronous streams complete later; the plan's events and final
// barrier order them (see execution_plan.h).
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "exec/execution_plan.h"
#include "base/logging.h"
#include "exec/run_resources.h"
#include "exec/run_limits.h"
#include "plugin_host/abi_objects.h"

namespace loom::profile {
class Profiler;
}

namespace loom::exec {

class ThreadPool;
struct MemoryPattern;

// IO binding resolved to the plan's steps and slots by the session.
struct RunBindings {
  // Copy steps (by index) that do not run: their output is this value (a
  // bound input already in the copy's destination memory), or stays unset
  // when nothing reads it (an output kept on the device).
  std::map<size_t, const LOOM_Value*> skipped_copies;
  struct Output {
    std::string name;  // the graph output, for messages
    // Pre-allocated: the produced dtype and dims must be these.
    DType dtype = DType::kUndefined;
    Dims dims;
    void* data = nullptr;
    // Otherwise: storage for what the step produces (in the slot's memory).
    std::function<Expected<void*>(DType, const Dims&)> allocate;
  };
  std::map<SlotId, Output> outputs;
};

// Sees values as the run makes them (Session's RunOptions::observe):
// `see` is called for each slot with watched[slot] set, right after the
// step that makes it succeeds, on the thread that ran that step. Host-memory
// tensors only; the tensor may share the run's storage and is valid during
// the call only.
struct ValueObserver {
  std::vector<char> watched;  // by SlotId
  std::function<void(const std::string& name, const Tensor& value)> see;
};

struct ExecuteOptions {
  // Cancel flag and deadline: the run stops before its next step (and
  // subgraph runs before theirs) with kCancelled / kTimedOut.
  RunLimits limits;
  // Run in parallel on this pool; the calling thread takes part until the
  // run is done. NULL: sequential.
  ThreadPool* inter_op = nullptr;
  // Sequential runs with dynamic shapes (exec/memory_pattern.h): place the
  // intermediates the static plan could not size by `pattern`, else record
  // the bytes each takes into `recorded` (one entry per slot).
  const MemoryPattern* pattern = nullptr;
  std::vector<int64_t>* recorded = nullptr;
  const RunBindings* bindings = nullptr;
  // The run's log level and tag, for every thread working on the run (may
  // be NULL: the caller's).
  const log::RunLogContext* log = nullptr;
  // Profiling sessions: the steps' spans (and device spans) go here, as run
  // number `run`.
  profile::Profiler* profiler = nullptr;
  int run = 0;
  const ValueObserver* observer = nullptr;
};

using ValuePtr = std::unique_ptr<LOOM_Value>;

// Runs the plan once. `inputs` are bound by name (validated by the caller)
// and borrowed for the run; returns new host values for `outputs` (slots from
// plan.outputs).
Expected<std::vector<ValuePtr>> execute(const ExecutionPlan& plan, const std::vector<plugin_host::EpInstance*>& eps,
                                        const std::map<std::string, const LOOM_Value*>& inputs,
                                        const std::vector<SlotId>& outputs, RunResourcePool& pool,
                                        const ExecuteOptions& options = {});

}  // namespace loom::exec
