// Reading a Loom profile: the Chrome-trace / Perfetto JSON a session writes
// when profiling is on. `loom profile summarize` and `loom profile timeline`
// read it through read_trace().
//
// Format, version 1 (the contract between the producer in core/ and these
// readers):
//
//   { "traceEvents": [ ...events... ], "displayTimeUnit": "ms",
//     "otherData": { "loom_profile_version": 1, "model": "<path>",
//                    "providers": ["cpu_onednn", "reference"] } }
//
// `ts` and `dur` are microseconds (doubles) since the session started being
// created. Only complete events ("ph":"X") and metadata ("ph":"M") are read;
// every other phase is ignored.
//
// Lanes are named by metadata events
//   {"ph":"M","name":"process_name","pid":P,"args":{"name":"..."}}
//   {"ph":"M","name":"thread_name","pid":P,"tid":T,"args":{"name":"..."}}
//
// pid 1 ("loom host"):
//   tid 0 "session": session phases, cat "session", name one of
//     load | transform | pass {pass: "<name>", changed: bool} (inside transform)
//     | partition | compile {partition: "<label>", ep: "<provider>"} | plan
//   tid 1..99: host threads that run steps. Per run k, on the calling thread:
//     cat "run",      name "run",      args {run: k, tag: "..."}
//     cat "executor", name "executor", args {run: k}
//   and one event per step, on the thread that ran it:
//     cat "step", name "<node name or step label>", args {run: k, step: i,
//       kind: kernel|partition|copy|record|wait|barrier, op_type, ep,
//       stream: s, inputs: "float[1,3,224,224]; ...", outputs: "...",
//       bytes: N (copies only), kernel_us: X,
//       released_constants: ["<initializer>", ...] (when the plugin freed them)}
//     and inside it, the pieces the plugin named (LOOM_HostApi::
//     kernel_profile_part: each primitive or host kernel a compiled
//     partition ran, the program it built on a new shape):
//     cat "part", name "<what ran> <node>", args {run: k, step: i, op_type, ep}
//     `kernel_us` is the time inside the plugin's compute (or copy) call;
//     `dur` is the whole step including the host's work around it. op_type is
//     "fused(Conv+Relu)" for partitions and the kind for copy / sync steps.
//   tid 100+s: host-side launches of the steps of asynchronous stream s
//     (the same step events).
// pid 2 ("loom device"), tid s: device-side execution on stream s,
//   cat "device", name "<node>", args {run: k, step: i, op_type, ep}.
//
// Malformed events (wrong types, missing ts) are skipped and counted, never
// fatal; a file that is not JSON, not an object, or has no
// otherData.loom_profile_version is refused with a message naming the file.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "loom/profile_format.h"
#include "loom/status.h"

namespace loom::tools::profile {

constexpr int kTraceVersion = profile_format::kVersion;
constexpr int64_t kHostPid = profile_format::kHostPid;
constexpr int64_t kDevicePid = profile_format::kDevicePid;
constexpr int64_t kSessionTid = profile_format::kSessionTid;
constexpr int64_t kFirstLaunchTid = profile_format::kFirstLaunchTid;

// One complete ("X") event with the args the readers use. Times in µs.
struct Span {
  std::string name;
  std::string cat;
  double ts = 0;
  double dur = 0;
  int64_t pid = 0;
  int64_t tid = 0;
  std::optional<int64_t> run;
  std::optional<int64_t> step;
  std::optional<int64_t> stream;
  std::string kind;     // step kind
  std::string op_type;
  std::string ep;
  std::string inputs;   // shapes, as the producer wrote them
  std::string outputs;
  std::string tag;      // run tag
  std::string pass;     // pass name (pass events)
  std::optional<bool> changed;
  std::string partition;  // compile events
  double bytes = 0;        // copies
  std::optional<double> kernel_us;

  double end() const { return ts + dur; }
};

using Lane = std::pair<int64_t, int64_t>;  // (pid, tid)

struct Trace {
  std::string path;
  int64_t version = 0;
  std::string model;
  std::vector<std::string> providers;
  std::vector<Span> spans;  // complete events, in file order
  std::map<int64_t, std::string> process_names;
  std::map<Lane, std::string> thread_names;
  size_t skipped = 0;  // malformed events left out

  // The label of a lane: its thread_name, else "pid P tid T".
  std::string lane_name(const Lane& lane) const;
  // Run ids (args.run of run, executor, step and device events), ascending.
  std::vector<int64_t> run_ids() const;
};

// Reads and validates `path`. Errors name the file: "PATH: not JSON (...)",
// "PATH: not a Loom profile (no otherData.loom_profile_version)", ...
Expected<Trace> read_trace(const std::string& path);

}  // namespace loom::tools::profile
