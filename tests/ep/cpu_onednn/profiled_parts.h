// What cpu_onednn says it ran, read from a session's profile: each step of
// a compiled partition is a part named "<what>: <node>" ("gemv: ...",
// "depthwise banded: ...", "build program: [1,8,8,8]"), the steps list
// the constants the EP let the host free at run time, and the session's
// plan phase those it packed and let go of at creation. Tests check which implementation
// was chosen through these, as a user reads them in `loom profile`.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "loom/loom.h"

namespace loom::ep_testing {

struct ProfiledParts {
  std::vector<std::string> names;     // every part of every run so far, in trace order
  std::vector<std::string> released;  // constants released by runs, one entry per release
  std::vector<std::string> packed_at_creation;  // constants packed while compiling, their bytes freed
  // Parts whose name starts with the words `kind`: "depthwise" counts
  // "depthwise: ..." and "depthwise banded: ...", "depthwise banded" only
  // the latter.
  uint64_t count(const std::string& kind) const {
    uint64_t n = 0;
    for (const std::string& name : names)
      if (name.compare(0, kind.size(), kind) == 0 &&
          (name.size() == kind.size() || name[kind.size()] == ':' || name[kind.size()] == ' '))
        ++n;
    return n;
  }
  // As count, also counting work another step took over and runs inside
  // its own: a part "depthwise banded: pointwise expand <node> + <node>"
  // counts for "pointwise expand".
  uint64_t count_with_fed(const std::string& kind) const {
    uint64_t n = count(kind);
    for (const std::string& name : names)
      if (name.find(": " + kind + " ") != std::string::npos) ++n;
    return n;
  }
};

// Options that make a session record a profile to a file of its own.
inline SessionOptions profiled_options() {
  static std::atomic<int> next{0};
  SessionOptions o;
  o.profiling = true;
  o.profile_path = (std::filesystem::temp_directory_path() /
                    ("loom_parts_" + std::to_string(::getpid()) + "_" + std::to_string(next++) + ".json"))
                       .string();
  return o;
}

// What `session` (made with profiled_options) recorded so far.
inline ProfiledParts parts_of(const Session& session) {
  ProfiledParts out;
  auto path = session.end_profiling();
  EXPECT_TRUE(path.has_value()) << path.status().message();
  if (!path.has_value()) return out;
  nlohmann::json trace;
  try {
    std::ifstream in(*path);
    trace = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    ADD_FAILURE() << *path << ": " << e.what();
  }
  std::filesystem::remove(*path);
  if (!trace.contains("traceEvents")) return out;
  for (const nlohmann::json& e : trace["traceEvents"]) {
    const std::string cat = e.value("cat", "");
    if (cat == "part") out.names.push_back(e.value("name", ""));
    if (cat == "session" && e.value("name", "") == "plan" && e.contains("args") &&
        e["args"].contains("packed_constants"))
      for (const nlohmann::json& c : e["args"]["packed_constants"]) out.packed_at_creation.push_back(c.get<std::string>());
    if (cat == "step" && e.contains("args") && e["args"].contains("released_constants"))
      for (const nlohmann::json& c : e["args"]["released_constants"]) out.released.push_back(c.get<std::string>());
  }
  return out;
}

}  // namespace loom::ep_testing
