// The fixed numbers of Loom's profile traces (Chrome-trace / Perfetto JSON,
// written by Session::end_profiling, read by `loom profile`): one definition
// for the writer and the readers. The format itself is described in
// tools/loom/profile_trace.h.
#pragma once

namespace loom::profile_format {

constexpr int kVersion = 1;         // otherData.loom_profile_version
constexpr int kHostPid = 1;         // "loom host"
constexpr int kDevicePid = 2;       // "loom device": tid = stream index
constexpr int kSessionTid = 0;      // session phases
constexpr int kFirstLaunchTid = 100;  // + stream index: launches on an asynchronous stream

}  // namespace loom::profile_format
