// loom.SessionOptions and loom.RunOptions: ONNX Runtime's option objects,
// mapped onto loom::Config / loom::SessionOptions / loom::RunOptions. Only
// the fields a user set override the configuration file and the
// LOOM_* environment variables.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
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
