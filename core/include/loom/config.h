// Session and environment configuration, read from one JSON file.
//
// Schema (every key optional; unknown keys and wrong types are errors that
// name the key path, e.g. "providers[1]: expected a string"):
//   {
//     "plugin_dirs":   ["path", ...],          // scanned in addition to the default
//     "providers":     ["cpu_onednn", "reference"],  // priority order
//     "provider_options": { "<provider>": { "<key>": "<string value>" } },
//     "fallback":      "allow" | "warn" | "deny",   // default "warn"; see Config::fallback
//     "optimization_level": "disabled" | "basic" | "extended" | "layout" | "all", // default "extended"
//     "execution_mode": "sequential" | "parallel",  // default "sequential"
//     "precision":     "fp32" | "fp16",    // default "fp32"; fp16: see Config::precision
//     "threads": { "intra_op": int >= 0, "inter_op": int >= 0,  // 0 = default
//                  "spin_us": int >= 0,          // inter-op workers poll this long before sleeping (default 2000)
//                  "shared_inter_op": bool },    // one inter-op pool for every session of the environment
//     "memory": { "arena_limit_mb": { "<memory kind, e.g. cpu>" | "*": int >= 0 },  // 0 / absent = no limit
//                 "arena_growth": "double" | "exact",      // next chunk: double the last (default) or just the request
//                 "shrink_after_run": bool },              // return idle memory to the device after each run
//     "profiling": { "enabled": bool, "path": "profile.json" },  // Session::end_profiling writes it
//     "limits": { "max_model_mb": int >= 0,    // model file (or bytes) plus every tensor it holds
//                 "max_nodes": int >= 0,       // nodes, subgraphs' included; also 8 value names per node
//                 "max_tensor_mb": int >= 0,   // any one tensor: initializers, attributes, run-time values
//                 "run_timeout_ms": int >= 0 }, // a run stops at its next step after this long
//                 // 0 / absent = no limit; a model or run over a limit fails naming the limit
//     "log_level": "trace" | "debug" | "info" | "warn" | "error" | "off"  // default "warn"
//   }
// Environment overrides: LOOM_PLUGIN_PATH (':'-separated dirs added to
// plugin_dirs), LOOM_PROVIDERS (comma list), LOOM_LOG_LEVEL.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "loom/status.h"

namespace loom {

enum class FallbackPolicy { kAllow, kWarn, kDeny };
enum class OptimizationLevel { kDisabled = 0, kBasic = 1, kExtended = 2, kLayout = 3, kAll = 4 };
// Sequential: steps run one after another on the calling thread. Parallel:
// independent steps run concurrently on the inter-op pool (the calling
// thread helps); results are the same.
enum class ExecutionMode { kSequential = 0, kParallel = 1 };
enum class ArenaGrowth { kDouble = 0, kExact = 1 };
// Float32: the model's own element types. Float16: the float32 compute of
// the model (convolutions, products, element-wise and data movement ops;
// transform/float16_conversion.h lists them) runs on float16 values and
// weights, as ONNX Runtime's float16 converter with keep_io_types makes it;
// inputs and outputs stay float32, and ops outside that list keep float32
// with Casts around them.
enum class Precision { kFloat32 = 0, kFloat16 = 1 };

struct Config {
  std::vector<std::string> plugin_dirs;
  // Empty means: every available provider, with "reference" last.
  std::vector<std::string> providers;
  std::map<std::string, std::map<std::string, std::string>> provider_options;
  // What happens when the providers asked for are not all there:
  // - a provider named in `providers` that cannot be loaded (missing,
  //   refused, failing to start) is an error naming it and why, unless
  //   fallback is "allow" (then it is skipped with a warning);
  // - nodes no listed provider claims run on the fallback provider
  //   (reference): silently with "allow", with a warning per node with
  //   "warn" (ONNX Runtime warns too), and "deny" makes it an error.
  FallbackPolicy fallback = FallbackPolicy::kWarn;
  OptimizationLevel optimization_level = OptimizationLevel::kExtended;
  // Graph passes not to run, by name (`loom optimize --list-passes` names
  // them); unknown names are an error at session creation.
  std::vector<std::string> disabled_passes;
  // Bisecting a bad rewrite: run only the first N optimization passes (in
  // the order the pass manager runs them, counting every run of a pass);
  // -1 runs them all. Lowerings that give ops their meaning always run.
  int stop_after_pass = -1;
  ExecutionMode execution_mode = ExecutionMode::kSequential;
  Precision precision = Precision::kFloat32;
  int intra_op_threads = 0;
  // Inter-op pool workers for parallel execution; 0 = one per core but the
  // caller's (at least 1).
  int inter_op_threads = 0;
  int spin_us = 2000;
  bool shared_inter_op = false;  // else each parallel session has its own pool
  // Most MiB each memory kind's arena may reserve, by memory kind name ("*"
  // for every kind not named); a run that needs more fails with
  // StatusCode::kOutOfMemory naming the memory kind.
  std::map<std::string, int64_t> arena_limit_mb;
  ArenaGrowth arena_growth = ArenaGrowth::kDouble;
  // Frees a run's buffers and every idle chunk when no run is in flight
  // (slower runs, smallest footprint between runs).
  bool shrink_arenas_after_run = false;
  // Profiling (loom/session.h: Session::end_profiling): session phases, runs,
  // steps and device spans as a Chrome-trace / Perfetto JSON file.
  bool profiling_enabled = false;
  std::string profiling_path = "loom_profile.json";
  std::string log_level = "warn";
  // Resource limits (0 = none). Loading refuses a model over max_model_mb,
  // max_nodes or max_tensor_mb (before allocating the tensor at fault) with
  // kInvalidArgument; a run that would make a tensor over max_tensor_mb
  // fails with kOutOfMemory, one running past run_timeout_ms with kTimedOut.
  int64_t max_model_mb = 0;
  int64_t max_nodes = 0;
  int64_t max_tensor_mb = 0;
  int64_t run_timeout_ms = 0;

  // Who wrote a config file. `plugin_dirs` loads and runs code (plugins run
  // with the full rights of the process, SECURITY.md), so a config from a
  // stranger (kUntrusted: a service reading configs its users send) may not
  // name any: it is refused naming the key. The operator's own config
  // (kOperator, the default; `loom --config`) may.
  enum class Source { kOperator, kUntrusted };
  static Expected<Config> from_json_string(const std::string& json, const std::string& source_name = "config",
                                           Source source = Source::kOperator);
  static Expected<Config> from_json_file(const std::string& path, Source source = Source::kOperator);
  // Applies LOOM_PLUGIN_PATH / LOOM_PROVIDERS / LOOM_LOG_LEVEL if set.
  Status apply_environment();
  // The effective configuration as JSON (for `loom config`-style printing).
  std::string to_json() const;
};

// Standard EP option keys the core fills from the config (per-EP
// provider_options override them).
inline constexpr const char* kIntraOpThreadsOption = "intra_op_threads";

std::string fallback_policy_name(FallbackPolicy p);
std::string optimization_level_name(OptimizationLevel l);
std::string execution_mode_name(ExecutionMode m);
std::string precision_name(Precision p);

}  // namespace loom
