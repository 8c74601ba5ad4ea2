// Runs recorded once and replayed (LOOM_EP_FLAG_CAPTURE_RUNS; ONNX
// Runtime's enable_cuda_graph): for a plan whose device work is one
// recording EP's (exec/capture_layout.h), the second run with given input
// shapes records the launches of the region on the EP's stream; later runs
// with the same shapes copy their inputs into the recorded buffers, queue
// the recording, and copy the outputs back, without launching a step.
//
// The recording owns what the recorded run used: its RunResources (planned
// buffers at fixed addresses), every buffer and scratch block it allocated
// (never freed until the recorder goes), and the device values the outputs
// are copied from. One run replays at a time; a run that finds the recorder
// busy, or brings other shapes, runs the usual way. A recording that fails
// (the EP could not record some work) turns recording off for the session,
// with the reason logged, and that run is repeated the usual way.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "exec/capture_layout.h"
#include "exec/executor.h"
#include "exec/run_state.h"

namespace loom::exec {

class RunRecorder {
 public:
  RunRecorder(const ExecutionPlan& plan, const std::vector<plugin_host::EpInstance*>& eps, CaptureLayout layout,
              RunResourcePool& pool);
  ~RunRecorder();
  RunRecorder(const RunRecorder&) = delete;
  RunRecorder& operator=(const RunRecorder&) = delete;

  // The run through the recording: nullopt when this run must go the usual
  // way (the first run with these shapes warms up; the recorder is busy,
  // off, or holds other shapes), else its outputs or failure. `signature`
  // names the inputs' types and shapes.
  std::optional<Expected<std::vector<ValuePtr>>> run(const std::map<std::string, const LOOM_Value*>& inputs,
                                                     const std::vector<SlotId>& outputs, const std::string& signature,
                                                     const RunLimits& limits);

  // Counters for tests and the log: runs recorded and replayed.
  int recordings() const { return recordings_; }
  int replays() const { return replays_; }
  // Why recording is off ("" while it is on).
  std::string off_reason() const;

 private:
  std::optional<Expected<std::vector<ValuePtr>>> record(const std::map<std::string, const LOOM_Value*>& inputs,
                                                        const std::vector<SlotId>& outputs, const RunLimits& limits);
  Expected<std::vector<ValuePtr>> replay(const std::map<std::string, const LOOM_Value*>& inputs,
                                         const std::vector<SlotId>& outputs, const RunLimits& limits);
  void turn_off(const std::string& why);
  void release_recording();

  const ExecutionPlan& plan_;
  const std::vector<plugin_host::EpInstance*>& eps_;
  const CaptureLayout layout_;
  RunResourcePool& pool_;
  mutable std::mutex mutex_;
  std::string off_;           // why recording is off
  std::string warm_signature_;  // shapes of the last usual run (the warm-up)
  std::string signature_;     // shapes of the recording
  std::unique_ptr<RunResources> resources_;
  LOOM_CapturedWork* work_ = nullptr;
  DeferredFrees kept_;  // buffers the recorded work uses
  // The recorded run's values at the region's edges: where each input copy
  // wrote, and what each output copy reads.
  std::map<SlotId, std::unique_ptr<LOOM_Value>> edges_;
  int recordings_ = 0, replays_ = 0;
};

}  // namespace loom::exec
