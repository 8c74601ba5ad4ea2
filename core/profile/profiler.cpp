#include "profile/profiler.h"

#include <fstream>

namespace loom::profile {

Profiler::Profiler(Clock::time_point origin) : origin_(origin) {
  name_lane(kHostPid, kSessionTid, "session");
}

void Profiler::span(int pid, int tid, const char* cat, std::string name, double ts_us, double dur_us,
                    nlohmann::json args) {
  nlohmann::json e = {{"ph", "X"}, {"cat", cat},  {"name", std::move(name)}, {"ts", ts_us},
                      {"dur", dur_us}, {"pid", pid}, {"tid", tid}};
  if (!args.is_null()) e["args"] = std::move(args);
  std::lock_guard<std::mutex> lock(mutex_);
  events_.push_back(std::move(e));
}

void Profiler::phase(const char* name, Clock::time_point start, nlohmann::json args) {
  const double ts = us(start);
  span(kHostPid, kSessionTid, "session", name, ts, now_us() - ts, std::move(args));
}

int Profiler::thread_lane() {
  const std::thread::id self = std::this_thread::get_id();
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = thread_lanes_.find(self);
  if (it != thread_lanes_.end()) return it->second;
  // Lanes 1..99; past that threads share the last one rather than collide
  // with the stream lanes.
  const int lane = std::min(static_cast<int>(thread_lanes_.size()) + 1, kFirstLaunchTid - 1);
  thread_lanes_[self] = lane;
  lane_names_[{kHostPid, lane}] = lane == 1 ? "run thread" : "thread " + std::to_string(lane);
  return lane;
}

void Profiler::name_lane(int pid, int tid, const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  lane_names_[{pid, tid}] = name;
}

Status Profiler::write(const std::string& path, const std::string& model,
                       const std::vector<std::string>& providers) const {
  nlohmann::json events = nlohmann::json::array();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", kHostPid}, {"args", {{"name", "loom host"}}}});
    events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", kDevicePid}, {"args", {{"name", "loom device"}}}});
    for (const auto& [lane, name] : lane_names_)
      events.push_back(
          {{"ph", "M"}, {"name", "thread_name"}, {"pid", lane.first}, {"tid", lane.second}, {"args", {{"name", name}}}});
    for (const nlohmann::json& e : events_) events.push_back(e);
  }
  nlohmann::json doc = {{"traceEvents", std::move(events)},
                        {"displayTimeUnit", "ms"},
                        {"otherData", {{"loom_profile_version", profile_format::kVersion}, {"model", model}, {"providers", providers}}}};
  std::ofstream out(path);
  if (!out) return invalid_argument("cannot write the profile to '" + path + "'");
  out << doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  if (!out) return fail("writing the profile to '" + path + "' failed");
  return Status::ok();
}

}  // namespace loom::profile
