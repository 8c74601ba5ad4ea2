#include "exec/step_profiler.h"

#include <algorithm>

#include "plugin_host/abi_objects.h"

namespace loom::exec {
namespace {

const char* kind_name(StepKind k) {
  switch (k) {
    case StepKind::kKernel: return "kernel";
    case StepKind::kPartition: return "partition";
    case StepKind::kCopy: return "copy";
    case StepKind::kRecord: return "record";
    case StepKind::kWait: return "wait";
    case StepKind::kBarrier: return "barrier";
  }
  return "?";
}

bool can_time(const LOOM_Event* e) { return e != nullptr && LOOM_HAS_FIELD(e, LOOM_Event, elapsed_us) && e->elapsed_us; }

}  // namespace

StepProfiler::StepProfiler(profile::Profiler& profiler, int run, const ExecutionPlan& plan,
                           const std::vector<plugin_host::EpInstance*>& eps, RunResources& resources)
    : profiler_(profiler), run_(run), plan_(plan), eps_(eps), resources_(resources) {
  const size_t n = plan.streams.size();
  used_.assign(n, 0);
  reference_.assign(n, nullptr);
  reference_us_.assign(n, 0);
  if (resources_.timing_events.size() < n) resources_.timing_events.resize(n);
  for (size_t s = 1; s < n; ++s) {
    const std::string& ep = plan.streams[s].name;
    profiler_.name_lane(profile::kHostPid, profile::kFirstLaunchTid + static_cast<int>(s),
                        "stream " + std::to_string(s) + " launches (" + ep + ")");
    LOOM_Event* ref = take_event(s);
    if (can_time(ref) && plugin_host::from_abi(ref->record(ref->state, resources_.streams[s])).is_ok()) {
      reference_[s] = ref;
      reference_us_[s] = profiler_.now_us();
      profiler_.name_lane(profile::kDevicePid, static_cast<int>(s), "stream " + std::to_string(s) + " (" + ep + ")");
    }
  }
}

LOOM_Event* StepProfiler::take_event(size_t stream) {
  std::vector<LOOM_Event*>& pool = resources_.timing_events[stream];
  if (used_[stream] == pool.size()) {
    auto e = eps_[static_cast<size_t>(plan_.streams[stream].ep)]->new_event();
    if (!e) return nullptr;
    pool.push_back(*e);
  }
  return pool[used_[stream]++];
}

bool StepProfiler::timed(size_t step) const {
  const Step& st = plan_.steps[step];
  return st.stream != kHostStream && reference_[st.stream] != nullptr &&
         (st.kind == StepKind::kKernel || st.kind == StepKind::kPartition || st.kind == StepKind::kCopy);
}

void StepProfiler::before(size_t step) {
  if (!timed(step)) return;
  const size_t s = plan_.steps[step].stream;
  std::lock_guard<std::mutex> lock(mutex_);
  LOOM_Event* e = take_event(s);
  if (e == nullptr || !plugin_host::from_abi(e->record(e->state, resources_.streams[s])).is_ok()) return;
  pending_.push_back(Pending{step, e, nullptr});
}

void StepProfiler::after(size_t step) {
  if (!timed(step)) return;
  const size_t s = plan_.steps[step].stream;
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = pending_.rbegin(); it != pending_.rend(); ++it) {
    if (it->step != step || it->end != nullptr) continue;
    LOOM_Event* e = take_event(s);
    if (e != nullptr && plugin_host::from_abi(e->record(e->state, resources_.streams[s])).is_ok())
      it->end = e;
    return;
  }
}

void StepProfiler::step_span(size_t step, profile::Clock::time_point start, const StepTiming& timing, bool ok) {
  const Step& st = plan_.steps[step];
  const double ts = profiler_.us(start);
  const double dur = profiler_.now_us() - ts;
  nlohmann::json args = {{"run", run_},          {"step", step},  {"kind", kind_name(st.kind)},
                         {"op_type", st.op_type}, {"stream", st.stream}};
  if (st.kind == StepKind::kKernel || st.kind == StepKind::kPartition || st.kind == StepKind::kCopy) {
    args["ep"] = eps_[st.ep]->name();
    args["inputs"] = timing.inputs;
    args["outputs"] = timing.outputs;
    args["kernel_us"] = timing.kernel_us;
  }
  if (st.kind == StepKind::kCopy) args["bytes"] = timing.bytes;
  if (!timing.released_constants.empty()) args["released_constants"] = timing.released_constants;
  if (!ok) args["failed"] = true;
  const int tid = st.stream == kHostStream ? profiler_.thread_lane()
                                           : profile::kFirstLaunchTid + static_cast<int>(st.stream);
  profiler_.span(profile::kHostPid, tid, "step", st.name, ts, dur, std::move(args));
  // What the plugin said ran inside the step, nested in its span (clipped
  // to it, so a plugin's clock slip cannot draw a piece outside the step).
  for (const StepTiming::Part& part : timing.parts) {
    const double from = std::max(ts, profiler_.us(part.start));
    const double to = std::min(ts + dur, profiler_.us(part.end));
    if (to < from) continue;
    nlohmann::json part_args = {{"run", run_}, {"step", step}, {"op_type", st.op_type}};
    if (st.kind == StepKind::kKernel || st.kind == StepKind::kPartition) part_args["ep"] = eps_[st.ep]->name();
    profiler_.span(profile::kHostPid, tid, "part", part.name, from, to - from, std::move(part_args));
  }
}

void StepProfiler::finish() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Pending& p : pending_) {
    if (p.end == nullptr) continue;
    const Step& st = plan_.steps[p.step];
    LOOM_Event* ref = reference_[st.stream];
    double from = 0, to = 0;
    if (!plugin_host::from_abi(p.start->elapsed_us(p.start->state, ref->state, &from)).is_ok() ||
        !plugin_host::from_abi(p.end->elapsed_us(p.end->state, ref->state, &to)).is_ok())
      continue;
    nlohmann::json args = {{"run", run_}, {"step", p.step}, {"op_type", st.op_type}, {"ep", eps_[st.ep]->name()}};
    profiler_.span(profile::kDevicePid, static_cast<int>(st.stream), "device", st.name, reference_us_[st.stream] + from,
                   to - from, std::move(args));
  }
  pending_.clear();
}

}  // namespace loom::exec
