#include "profile_trace.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

namespace loom::tools::profile {
namespace {

using nlohmann::json;

// Lenient accessors: a field of the wrong type reads as absent, so one odd
// event never takes the whole trace down.
std::optional<double> number(const json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number()) return std::nullopt;
  const double v = it->get<double>();
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<int64_t> integer(const json& obj, const char* key) {
  auto v = number(obj, key);
  if (!v || *v != std::floor(*v) || std::fabs(*v) > 9e15) return std::nullopt;
  return static_cast<int64_t>(*v);
}

std::string text(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The reason without nlohmann's "[json.exception.parse_error.101] " prefix.
std::string parse_reason(const char* what) {
  std::string s = what;
  if (!s.empty() && s[0] == '[') {
    auto close = s.find("] ");
    if (close != std::string::npos) s = s.substr(close + 2);
  }
  return s;
}

bool read_span(const json& e, Span& s) {
  auto ts = number(e, "ts");
  auto pid = integer(e, "pid");
  auto tid = integer(e, "tid");
  if (!ts || !pid || !tid) return false;
  s.ts = *ts;
  s.dur = number(e, "dur").value_or(0);
  if (s.dur < 0) return false;
  s.pid = *pid;
  s.tid = *tid;
  s.name = text(e, "name");
  s.cat = text(e, "cat");
  auto args_it = e.find("args");
  if (args_it == e.end() || !args_it->is_object()) return true;
  const json& a = *args_it;
  s.run = integer(a, "run");
  s.step = integer(a, "step");
  s.stream = integer(a, "stream");
  s.kind = text(a, "kind");
  s.op_type = text(a, "op_type");
  s.ep = text(a, "ep");
  s.inputs = text(a, "inputs");
  s.outputs = text(a, "outputs");
  s.tag = text(a, "tag");
  s.pass = text(a, "pass");
  s.partition = text(a, "partition");
  if (auto it = a.find("changed"); it != a.end() && it->is_boolean()) s.changed = it->get<bool>();
  s.bytes = std::max(0.0, number(a, "bytes").value_or(0));
  s.kernel_us = number(a, "kernel_us");
  return true;
}

}  // namespace

std::string Trace::lane_name(const Lane& lane) const {
  auto it = thread_names.find(lane);
  if (it != thread_names.end() && !it->second.empty()) return it->second;
  return "pid " + std::to_string(lane.first) + " tid " + std::to_string(lane.second);
}

std::vector<int64_t> Trace::run_ids() const {
  std::set<int64_t> ids;
  for (const Span& s : spans)
    if (s.run && (s.cat == "run" || s.cat == "executor" || s.cat == "step" || s.cat == "device")) ids.insert(*s.run);
  return {ids.begin(), ids.end()};
}

Expected<Trace> read_trace(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return invalid_argument(path + ": is a directory, not a trace file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found(path + ": cannot open (" + std::strerror(errno) + ")");
  json doc;
  try {
    doc = json::parse(in);
  } catch (const json::exception& e) {
    return invalid_argument(path + ": not JSON (" + parse_reason(e.what()) + ")");
  } catch (const std::exception& e) {  // the stream failing mid-read
    return fail(path + ": cannot read (" + e.what() + ")");
  }
  if (!doc.is_object()) return invalid_argument(path + ": not a Loom profile (the top level is not a JSON object)");
  auto other = doc.find("otherData");
  if (other == doc.end() || !other->is_object() || !other->contains("loom_profile_version"))
    return invalid_argument(path + ": not a Loom profile (no otherData.loom_profile_version)");
  Trace t;
  t.path = path;
  auto version = integer(*other, "loom_profile_version");
  if (!version || *version < 1)
    return invalid_argument(path + ": otherData.loom_profile_version is not a positive integer");
  if (*version > kTraceVersion)
    return invalid_argument(path + ": profile version " + std::to_string(*version) + " is newer than this loom reads (" +
                            std::to_string(kTraceVersion) + ")");
  t.version = *version;
  t.model = text(*other, "model");
  if (auto p = other->find("providers"); p != other->end() && p->is_array())
    for (const json& v : *p)
      if (v.is_string()) t.providers.push_back(v.get<std::string>());

  auto events = doc.find("traceEvents");
  if (events == doc.end() || !events->is_array())
    return invalid_argument(path + ": not a Loom profile (no traceEvents array)");
  for (const json& e : *events) {
    if (!e.is_object()) {
      ++t.skipped;
      continue;
    }
    const std::string ph = text(e, "ph");
    if (ph == "M") {
      auto pid = integer(e, "pid");
      auto args = e.find("args");
      if (!pid || args == e.end() || !args->is_object()) {
        ++t.skipped;
        continue;
      }
      const std::string name = text(e, "name");
      if (name == "process_name") {
        t.process_names[*pid] = text(*args, "name");
      } else if (name == "thread_name") {
        auto tid = integer(e, "tid");
        if (!tid) {
          ++t.skipped;
          continue;
        }
        t.thread_names[{*pid, *tid}] = text(*args, "name");
      }
    } else if (ph == "X") {
      Span s;
      if (read_span(e, s))
        t.spans.push_back(std::move(s));
      else
        ++t.skipped;
    }
  }
  return t;
}

}  // namespace loom::tools::profile
