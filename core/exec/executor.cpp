#include "exec/executor.h"

#include <chrono>
#include <optional>

#include "exec/run_state.h"
#include "exec/step_profiler.h"
#include "exec/thread_pool.h"

namespace loom::exec {
namespace {

// Shows the observer the watched values step `i` made.
void show_outputs(const ExecutionPlan& plan, const RunState& run, size_t i, const ValueObserver& observer) {
  for (SlotId slot : plan.steps[i].outputs) {
    if (slot >= observer.watched.size() || !observer.watched[slot]) continue;
    const LOOM_Value* v = run.value_of(slot);
    if (v == nullptr || v->kind != LOOM_VALUE_TENSOR) continue;
    if (v->tensor.memory != nullptr && !v->tensor.memory->host_accessible) continue;
    auto value = plugin_host::to_public(*v);
    if (value.has_value() && value->is_tensor()) observer.see(plan.slots[slot].name, value->tensor());
  }
}

Status run_observed(const ExecutionPlan& plan, RunState& run, size_t i, const ValueObserver* observer,
                    StepTiming* timing = nullptr) {
  Status status = run.run_step(plan.steps[i], timing);
  if (status && observer != nullptr) show_outputs(plan, run, i, *observer);
  return status;
}

// Runs step `i`; at debug level, logs it with its (launch) time; when
// profiling, records its spans; shows the observer what it made.
Status run_logged(const ExecutionPlan& plan, RunState& run, size_t i, StepProfiler* profile,
                  const ValueObserver* observer) {
  const bool debug = log::enabled(spdlog::level::debug);
  if (!debug && profile == nullptr) return run_observed(plan, run, i, observer);
  const auto start = std::chrono::steady_clock::now();
  StepTiming timing;
  if (profile != nullptr) profile->before(i);
  Status status = run_observed(plan, run, i, observer, profile != nullptr ? &timing : nullptr);
  if (profile != nullptr) {
    profile->after(i);
    profile->step_span(i, start, timing, status.is_ok());
  }
  if (debug) {
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    log::write(spdlog::level::debug, "step " + std::to_string(i) + "/" + std::to_string(plan.steps.size()) + " " +
                                         plan.steps[i].label + ": " + std::to_string(ms) + " ms" +
                                         (status ? "" : " (failed)"));
  }
  return status;
}

Status run_in_order(const ExecutionPlan& plan, RunState& run, const RunLimits& limits, StepProfiler* profile,
                    const ValueObserver* observer) {
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    LOOM_RETURN_IF_ERROR(limits.check(i, plan.steps.size()));
    Status status = limits.explain(run_logged(plan, run, i, profile, observer));
    if (!status) return status;
  }
  return Status::ok();
}

// Runs each step once all it depends on is done (plan.step_graph): ready
// steps go to the pool, except one that the finishing thread runs itself so
// a chain does not hop between threads. After a failure or a cancel the
// remaining steps are skipped (but still counted, so the wait ends).
class ParallelRun {
 public:
  ParallelRun(const ExecutionPlan& plan, RunState& run, ThreadPool& pool, const RunLimits& limits,
              const log::RunLogContext* log, StepProfiler* profile, const ValueObserver* observer)
      : plan_(plan),
        run_(run),
        pool_(pool),
        limits_(limits),
        log_(log),
        profile_(profile),
        observer_(observer),
        pending_(std::make_unique<std::atomic<int>[]>(plan.steps.size())),
        remaining_(plan.steps.size()) {
    for (size_t i = 0; i < plan.steps.size(); ++i) pending_[i].store(plan.step_graph.dependency_count[i]);
  }

  Status run() {
    if (plan_.steps.empty()) return Status::ok();
    for (size_t root : plan_.step_graph.roots) pool_.submit([this, root] { run_from(root); });
    pool_.run_until([this] { return remaining_.load(std::memory_order_acquire) == 0; });
    std::lock_guard<std::mutex> lock(status_mutex_);
    return status_;
  }

 private:
  void run_from(size_t step) {
    log::RunLogScope scope(log_);
    for (;;) {
      if (!failed_.load(std::memory_order_relaxed)) {
        Status st = limits_.check(step, plan_.steps.size());
        if (st) st = limits_.explain(run_logged(plan_, run_, step, profile_, observer_));
        if (st) run_.finish_step(plan_.steps[step]);
        else record_failure(std::move(st));
      }
      int next = -1;
      for (size_t s : plan_.step_graph.successors[step]) {
        if (pending_[s].fetch_sub(1, std::memory_order_acq_rel) != 1) continue;
        if (next < 0) next = static_cast<int>(s);
        else pool_.submit([this, s] { run_from(s); });
      }
      if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        pool_.notify();
        return;
      }
      if (next < 0) return;
      step = static_cast<size_t>(next);
    }
  }

  void record_failure(Status st) {
    std::lock_guard<std::mutex> lock(status_mutex_);
    if (status_.is_ok()) status_ = std::move(st);
    failed_.store(true, std::memory_order_relaxed);
  }

  const ExecutionPlan& plan_;
  RunState& run_;
  ThreadPool& pool_;
  const RunLimits& limits_;
  const log::RunLogContext* log_;
  StepProfiler* profile_;
  const ValueObserver* observer_;
  std::unique_ptr<std::atomic<int>[]> pending_;
  std::atomic<size_t> remaining_;
  std::atomic<bool> failed_{false};
  std::mutex status_mutex_;
  Status status_;
};

}  // namespace

Expected<std::vector<ValuePtr>> execute(const ExecutionPlan& plan, const std::vector<plugin_host::EpInstance*>& eps,
                                        const std::map<std::string, const LOOM_Value*>& inputs,
                                        const std::vector<SlotId>& outputs, RunResourcePool& pool,
                                        const ExecuteOptions& options) {
  const auto executor_start = profile::Clock::now();
  LOOM_ASSIGN_OR_RETURN(std::unique_ptr<RunResources> resources, pool.acquire());
  const bool parallel = options.inter_op != nullptr;
  // The pattern's blocks, one per memory kind, for this run only.
  std::vector<void*> pattern_blocks(plan.memories.size(), nullptr);
  Status status;
  if (!parallel && options.pattern != nullptr)
    for (size_t m = 0; status.is_ok() && m < plan.memories.size(); ++m) {
      if (options.pattern->block_bytes[m] == 0) continue;
      auto block = resources->arenas[m]->allocate(options.pattern->block_bytes[m]);
      if (block) pattern_blocks[m] = *block;
      else status = block.status().with_context("buffers of the run's shapes");
    }
  std::vector<ValuePtr> result;
  if (status.is_ok()) {
    // Its destructor synchronizes the streams, also when a step failed.
    RunState run(plan, eps, *resources, options.limits, parallel);
    if (!parallel) run.set_dynamic_memory(options.pattern, pattern_blocks, options.recorded);
    run.set_bindings(options.bindings);
    run.bind(inputs);
    log::RunLogScope scope(options.log);
    std::optional<StepProfiler> steps_profile;
    if (options.profiler != nullptr) steps_profile.emplace(*options.profiler, options.run, plan, eps, *resources);
    StepProfiler* p = steps_profile ? &*steps_profile : nullptr;
    status = parallel ? ParallelRun(plan, run, *options.inter_op, options.limits, options.log, p, options.observer).run()
                      : run_in_order(plan, run, options.limits, p, options.observer);
    if (steps_profile) {
      (void)run.synchronize_streams();  // device times are read once the streams are idle
      steps_profile->finish();
    }
    for (size_t i = 0; status.is_ok() && i < outputs.size(); ++i) {
      auto v = run.take_output(outputs[i]);
      if (!v) status = v.status();
      else result.push_back(std::move(*v));
    }
  }
  for (size_t m = 0; m < pattern_blocks.size(); ++m)
    if (pattern_blocks[m] != nullptr) resources->arenas[m]->free(pattern_blocks[m]);
  pool.release(std::move(resources));
  if (options.profiler != nullptr)
    options.profiler->span(profile::kHostPid, options.profiler->thread_lane(), "executor", "executor",
                           options.profiler->us(executor_start),
                           options.profiler->now_us() - options.profiler->us(executor_start),
                           {{"run", options.run}});
  if (!status) return status;
  return result;
}

}  // namespace loom::exec
