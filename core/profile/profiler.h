// Session profiling (config "profiling"): collects Chrome-trace / Perfetto
// events in the format tools/loom/profile_trace.h documents (version 1) —
// session phases on the session lane, per run the run and executor spans
// and one span per step on the lane of the thread that ran it (or of the
// asynchronous stream it was launched on), device-side spans on device
// lanes — and writes them as one JSON file. Thread-safe. Sessions that do
// not profile have no Profiler and pay nothing.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "loom/profile_format.h"
#include "loom/status.h"

namespace loom::profile {

using Clock = std::chrono::steady_clock;

using profile_format::kDevicePid;
using profile_format::kFirstLaunchTid;
using profile_format::kHostPid;
using profile_format::kSessionTid;

class Profiler {
 public:
  // `origin`: when the session started being created (ts 0).
  explicit Profiler(Clock::time_point origin);

  double us(Clock::time_point t) const { return std::chrono::duration<double, std::micro>(t - origin_).count(); }
  double now_us() const { return us(Clock::now()); }

  // A complete event; `args` a JSON object (or null).
  void span(int pid, int tid, const char* cat, std::string name, double ts_us, double dur_us,
            nlohmann::json args = nullptr);
  // A session phase on the session lane, from `start` to now.
  void phase(const char* name, Clock::time_point start, nlohmann::json args = nullptr);
  // The lane of the calling thread (tid 1..99), named on first use.
  int thread_lane();
  void name_lane(int pid, int tid, const std::string& name);
  // Numbers runs 1, 2, ...
  int next_run() { return ++runs_; }

  // Writes every event so far (collection goes on).
  Status write(const std::string& path, const std::string& model, const std::vector<std::string>& providers) const;

 private:
  const Clock::time_point origin_;
  std::atomic<int> runs_{0};
  mutable std::mutex mutex_;
  std::vector<nlohmann::json> events_;
  std::map<std::pair<int, int>, std::string> lane_names_;
  std::map<std::thread::id, int> thread_lanes_;
};

}  // namespace loom::profile
