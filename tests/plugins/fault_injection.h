// Failures on demand for test plugins. A plugin keeps one FaultPlan per
// library; EP options arm it:
//   "fail_at":   the point that fails (see FaultPoint names below);
//   "fail_call": the call at that point that fails first, counting from 1
//                (default 1);
//   "fail_once": "1" fails only that call; otherwise it and every later one.
// Arming with the plan already armed (same three values) keeps counting, so
// every session of an environment shares one count; other values re-arm
// from zero; disarm() switches failures off until other values arm it.
// Calls are counted per point whether or not a plan is armed (calls()), so
// a test can measure how many a run makes. Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace loom::test_plugins {

enum class FaultPoint : int {
  kGetCapability,
  kCompile,
  kCreateState,
  kCompute,
  kKernelCreate,
  kAllocate,
  kCopy,
  kStreamSynchronize,
  kCount,
};

inline const char* fault_point_name(FaultPoint p) {
  static const char* const kNames[] = {"get_capability", "compile",  "create_state", "compute",
                                       "kernel_create",  "allocate", "copy",         "stream_synchronize"};
  return kNames[static_cast<int>(p)];
}

inline bool fault_point_from_name(const std::string& name, FaultPoint* p) {
  for (int i = 0; i < static_cast<int>(FaultPoint::kCount); ++i)
    if (name == fault_point_name(static_cast<FaultPoint>(i))) {
      *p = static_cast<FaultPoint>(i);
      return true;
    }
  return false;
}

class FaultPlan {
 public:
  // Arms from EP options; returns false (and changes nothing) for an unknown
  // point name. Options without "fail_at" leave the plan as it is.
  bool arm(const std::vector<std::pair<std::string, std::string>>& options) {
    std::string at, call = "1", once;
    for (const auto& [k, v] : options) {
      if (k == "fail_at") at = v;
      if (k == "fail_call") call = v;
      if (k == "fail_once") once = v;
    }
    if (at.empty()) return true;
    FaultPoint p;
    if (!fault_point_from_name(at, &p)) return false;
    const std::string spec = at + "/" + call + "/" + once;
    std::lock_guard<std::mutex> lock(mutex_);
    if (spec == spec_) return true;  // armed, or disarmed, already
    spec_ = spec;
    point_ = static_cast<int>(p);
    first_ = std::stoull(call);
    once_ = once == "1";
    seen_ = 0;
    return true;
  }
  // Stays off for EPs created later with the same options.
  void disarm() {
    std::lock_guard<std::mutex> lock(mutex_);
    point_ = -1;
  }
  // Counts one call at `p`; true when this call must fail.
  bool hit(FaultPoint p) {
    ++calls_[static_cast<int>(p)];
    std::lock_guard<std::mutex> lock(mutex_);
    if (point_ != static_cast<int>(p)) return false;
    const uint64_t n = ++seen_;
    return once_ ? n == first_ : n >= first_;
  }
  // The message of an injected failure; it names neither the plugin nor the
  // node, so a test can check that the host adds both.
  static std::string message(FaultPoint p) { return std::string("injected fault at ") + fault_point_name(p); }
  uint64_t calls(FaultPoint p) const { return calls_[static_cast<int>(p)].load(); }

 private:
  std::atomic<uint64_t> calls_[static_cast<int>(FaultPoint::kCount)] = {};
  std::mutex mutex_;
  std::string spec_;
  int point_ = -1;
  uint64_t first_ = 1;
  bool once_ = false;
  uint64_t seen_ = 0;
};

}  // namespace loom::test_plugins
