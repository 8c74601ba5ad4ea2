// What bounds one run: its cancel flag, set from another thread, its
// deadline (config limits.run_timeout_ms) and the largest tensor it may make
// (limits.max_tensor_mb). Cancel and deadline are checked at every step
// boundary, also inside If / Loop / Scan bodies, and by long kernels that
// poll LOOM_HostApi::kernel_should_stop; the tensor limit whenever a kernel
// allocates an output or scratch.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "loom/status.h"

namespace loom::exec {

struct RunLimits {
  using Clock = std::chrono::steady_clock;
  const std::atomic<bool>* cancel = nullptr;  // may be NULL
  Clock::time_point deadline = Clock::time_point::max();
  int64_t timeout_ms = 0;  // what the deadline came from, for messages
  int64_t max_tensor_bytes = 0;  // 0 = none

  // Limits with a deadline `timeout_ms` from now (none when <= 0).
  static RunLimits make(const std::atomic<bool>* cancel, int64_t timeout_ms, int64_t max_tensor_bytes) {
    RunLimits s;
    s.cancel = cancel;
    s.max_tensor_bytes = max_tensor_bytes;
    if (timeout_ms > 0) {
      s.deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
      s.timeout_ms = timeout_ms;
    }
    return s;
  }

  bool cancelled() const { return cancel != nullptr && cancel->load(std::memory_order_relaxed); }
  bool timed_out() const { return deadline != Clock::time_point::max() && Clock::now() >= deadline; }

  // OK while the run may go on; else kCancelled or kTimedOut, saying before
  // which step (1-based) of `total` it stopped.
  Status check(size_t step, size_t total) const {
    const std::string where = " before step " + std::to_string(step + 1) + " of " + std::to_string(total);
    if (cancelled()) return Status(StatusCode::kCancelled, "run cancelled" + where);
    if (timed_out()) return Status(StatusCode::kTimedOut, timed_out_message() + where);
    return Status::ok();
  }

  // A step that failed because the run stopped under it (a subgraph run
  // cut short) reports the stop, with the step's own message.
  Status explain(const Status& step_status) const {
    if (step_status || step_status.code() == StatusCode::kCancelled || step_status.code() == StatusCode::kTimedOut)
      return step_status;
    if (cancelled()) return Status(StatusCode::kCancelled, "run cancelled: " + step_status.message());
    if (timed_out()) return Status(StatusCode::kTimedOut, timed_out_message() + ": " + step_status.message());
    return step_status;
  }

 private:
  std::string timed_out_message() const {
    return "run timed out after " + std::to_string(timeout_ms) + " ms (limits.run_timeout_ms)";
  }
};

}  // namespace loom::exec
