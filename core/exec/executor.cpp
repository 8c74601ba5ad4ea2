#include "exec/executor.h"

#include "exec/run_state.h"

namespace loom::exec {

Expected<std::vector<ValuePtr>> execute(const ExecutionPlan& plan, const std::vector<plugin_host::EpInstance*>& eps,
                                        const std::map<std::string, const LOOM_Value*>& inputs,
                                        const std::vector<SlotId>& outputs, RunResourcePool& pool,
                                        const std::atomic<bool>* cancel) {
  LOOM_ASSIGN_OR_RETURN(std::unique_ptr<RunResources> resources, pool.acquire());
  std::vector<ValuePtr> result;
  Status status;
  {
    // Its destructor synchronizes the streams, also when a step failed.
    RunState run(plan, eps, *resources, cancel);
    run.bind(inputs);
    for (size_t i = 0; status.is_ok() && i < plan.steps.size(); ++i) {
      if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) {
        status = Status(StatusCode::kCancelled, "run cancelled before step " + std::to_string(i + 1) + " of " +
                                                    std::to_string(plan.steps.size()));
        break;
      }
      status = run.run_step(plan.steps[i]);
      // A kernel that failed because a subgraph run was cancelled reports
      // its own error: the run is cancelled all the same.
      if (!status && cancel != nullptr && cancel->load(std::memory_order_relaxed))
        status = Status(StatusCode::kCancelled, "run cancelled: " + status.message());
    }
    for (size_t i = 0; status.is_ok() && i < outputs.size(); ++i) {
      auto v = run.take_output(outputs[i]);
      if (!v) status = v.status();
      else result.push_back(std::move(*v));
    }
  }
  pool.release(std::move(resources));
  if (!status) return status;
  return result;
}

}  // namespace loom::exec
