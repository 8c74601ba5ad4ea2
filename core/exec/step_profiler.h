// Profiling one run: the host-side span of every step (on the lane of the
// thread that ran it, or of the asynchronous stream it was launched on) and,
// for EPs whose events time the device (LOOM_Event.elapsed_us), the
// device-side span of every step on an asynchronous stream: an event is
// recorded on the stream before and after the step, and after the run their
// device times are placed on the host timeline from a reference event
// recorded on each stream when the run starts (the streams are idle then, so
// it fires at once). Thread-safe (parallel runs).
#pragma once

#include <mutex>
#include <vector>

#include "exec/run_resources.h"
#include "exec/run_state.h"
#include "profile/profiler.h"

namespace loom::exec {

class StepProfiler {
 public:
  StepProfiler(profile::Profiler& profiler, int run, const ExecutionPlan& plan,
               const std::vector<plugin_host::EpInstance*>& eps, RunResources& resources);
  // Around the step (device timing events; no-ops for host steps).
  void before(size_t step);
  void after(size_t step);
  // The host-side span of `step`, from `start` to now.
  void step_span(size_t step, profile::Clock::time_point start, const StepTiming& timing, bool ok);
  // After the streams are synchronized: the device spans.
  void finish();

 private:
  LOOM_Event* take_event(size_t stream);
  bool timed(size_t step) const;

  profile::Profiler& profiler_;
  const int run_;
  const ExecutionPlan& plan_;
  const std::vector<plugin_host::EpInstance*>& eps_;
  RunResources& resources_;
  std::mutex mutex_;
  std::vector<size_t> used_;           // per stream: timing events taken this run
  std::vector<LOOM_Event*> reference_;  // per stream, NULL when its EP cannot time
  std::vector<double> reference_us_;    // host time of each reference record
  struct Pending {
    size_t step = 0;
    LOOM_Event* start = nullptr;
    LOOM_Event* end = nullptr;
  };
  std::vector<Pending> pending_;
};

}  // namespace loom::exec
