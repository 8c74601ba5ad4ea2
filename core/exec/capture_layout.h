// Which part of an execution plan can be recorded once and replayed
// (LOOM_Ep.begin_capture / end_capture, a CUDA graph): the plan's device
// work must be one recording EP's, on its one stream, with nothing the host
// computes in between. The steps fall in three groups, run in this order:
//  - prefix: copies of graph inputs (and of initializers, done once) to the
//    device, run as usual before the recording is queued;
//  - region: the EP's kernel and partition launches, recorded;
//  - suffix: copies of graph outputs back to the host, event steps and the
//    barrier, run as usual after it.
// Moving a copy out of its place in the plan is safe only when no region
// step in between uses the planned memory it writes (prefix) or reads
// (suffix); that is checked. Unplanned buffers cannot collide: a recorded
// run keeps every buffer it allocated (exec/run_recorder.h).
#pragma once

#include <string>
#include <vector>

#include "exec/execution_plan.h"
#include "plugin_host/ep_instance.h"

namespace loom::exec {

struct CaptureLayout {
  std::string why_not;  // empty when the plan can be recorded
  size_t ep = 0;        // the recording EP
  size_t stream = 0;    // its stream
  std::vector<size_t> prefix, region, suffix;  // step indices, each in plan order
};

CaptureLayout capture_layout(const ExecutionPlan& plan, const std::vector<plugin_host::EpInstance*>& eps);

}  // namespace loom::exec
