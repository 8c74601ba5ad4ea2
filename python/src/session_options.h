// loom.SessionOptions and loom.RunOptions: ONNX Runtime's option objects,
// mapped onto loom::Config / loom::SessionOptions / loom::RunOptions. Only
// the fields a user set override the configuration file and the
// LOOM_* environment variables.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "loom/session.h"

namespace loom::python {

// ONNX Runtime's values, plus Loom's layout level.
enum class GraphOptimizationLevel { kDisableAll = 0, kEnableBasic = 1, kEnableExtended = 2, kEnableLayout = 3, kEnableAll = 99 };

struct PySessionOptions {
  std::optional<int> intra_op_num_threads;
  std::optional<int> inter_op_num_threads;
  std::optional<GraphOptimizationLevel> graph_optimization_level;
  std::optional<ExecutionMode> execution_mode;
  std::optional<int> log_severity_level;  // 0 verbose ... 4 fatal
  std::optional<FallbackPolicy> fallback;
  bool enable_profiling = false;
  std::string profile_file_prefix = "loom_profile";
  std::string optimized_model_filepath;
  std::vector<std::string> plugin_dirs;           // scanned before the configured ones
  std::vector<std::string> custom_op_libraries;   // register_custom_ops_library
  // ONNX Runtime's fields that Loom has no use for (its memory planning,
  // arenas and reuse are always on; its kernels are deterministic): kept so
  // existing code may set and read them, without effect.
  bool enable_mem_pattern = true;
  bool enable_cpu_mem_arena = true;
  bool enable_mem_reuse = true;
  bool use_deterministic_compute = false;
  std::string logid;
  int log_verbosity_level = 0;
  // add_session_config_entry: ORT's string keys; "session.intra_op.allow_spinning"
  // and "session.inter_op.allow_spinning" = "0" stop the inter-op workers'
  // spinning (config threads.spin_us 0); the others are kept for
  // get_session_config_entry.
  std::map<std::string, std::string> config_entries;

  // Writes the fields that were set into `config`.
  void apply(Config& config) const;
  // The per-session options (profiling, optimized model path).
  SessionOptions session_options() const;
};

struct PyRunOptions {
  std::string logid;                       // tags the run's log lines and errors
  std::optional<int> log_severity_level;
  std::shared_ptr<CancelToken> cancel = std::make_shared<CancelToken>();

  RunOptions run_options() const;
};

// Loom's log level name for an ONNX Runtime severity (0..4).
std::string log_level_of_severity(int severity);

void register_session_options(pybind11::module_& m);

}  // namespace loom::python
