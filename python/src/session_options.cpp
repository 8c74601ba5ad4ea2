#include "session_options.h"

#include <pybind11/stl.h>

#include <chrono>
#include <ctime>

#include "errors.h"

namespace loom::python {

namespace py = pybind11;

namespace {

OptimizationLevel loom_level(GraphOptimizationLevel l) {
  switch (l) {
    case GraphOptimizationLevel::kDisableAll: return OptimizationLevel::kDisabled;
    case GraphOptimizationLevel::kEnableBasic: return OptimizationLevel::kBasic;
    case GraphOptimizationLevel::kEnableExtended: return OptimizationLevel::kExtended;
    case GraphOptimizationLevel::kEnableLayout: return OptimizationLevel::kLayout;
    case GraphOptimizationLevel::kEnableAll: return OptimizationLevel::kAll;
  }
  return OptimizationLevel::kExtended;
}

// ONNX Runtime names its profile <prefix>_<date>_<time>.json.
std::string profile_path(const std::string& prefix) {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  localtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y-%m-%d_%H-%M-%S", &tm);
  return prefix + "_" + stamp + ".json";
}

int checked_severity(int s) {
  if (s < 0 || s > 4) throw_invalid_argument("log_severity_level must be 0 (verbose) to 4 (fatal), got " + std::to_string(s));
  return s;
}

int checked_threads(const char* what, int n) {
  if (n < 0) throw_invalid_argument(std::string(what) + " must be >= 0 (0 = default), got " + std::to_string(n));
  return n;
}

FallbackPolicy fallback_of(const std::string& s) {
  if (s == "allow") return FallbackPolicy::kAllow;
  if (s == "warn") return FallbackPolicy::kWarn;
  if (s == "deny") return FallbackPolicy::kDeny;
  throw_invalid_argument("fallback_policy must be 'allow', 'warn' or 'deny', got '" + s + "'");
}

}  // namespace

std::string log_level_of_severity(int severity) {
  static const char* kLevels[] = {"debug", "info", "warn", "error", "off"};
  return kLevels[checked_severity(severity)];
}

void PySessionOptions::apply(Config& config) const {
  if (!plugin_dirs.empty()) config.plugin_dirs.insert(config.plugin_dirs.begin(), plugin_dirs.begin(), plugin_dirs.end());
  if (intra_op_num_threads) config.intra_op_threads = *intra_op_num_threads;
  if (inter_op_num_threads) config.inter_op_threads = *inter_op_num_threads;
  if (graph_optimization_level) config.optimization_level = loom_level(*graph_optimization_level);
  if (execution_mode) config.execution_mode = *execution_mode;
  if (log_severity_level) config.log_level = log_level_of_severity(*log_severity_level);
  if (fallback) config.fallback = *fallback;
  for (const char* key : {"session.intra_op.allow_spinning", "session.inter_op.allow_spinning"}) {
    auto it = config_entries.find(key);
    if (it != config_entries.end() && it->second == "0") config.spin_us = 0;
  }
}

SessionOptions PySessionOptions::session_options() const {
  SessionOptions o;
  o.optimized_model_path = optimized_model_filepath;
  if (enable_profiling) {
    o.profiling = true;
    o.profile_path = profile_path(profile_file_prefix);
  }
  return o;
}

RunOptions PyRunOptions::run_options() const {
  RunOptions o;
  o.cancel = cancel;
  o.tag = logid;
  if (log_severity_level) o.log_level = log_level_of_severity(*log_severity_level);
  return o;
}

void register_session_options(py::module_& m) {
  py::enum_<GraphOptimizationLevel>(m, "GraphOptimizationLevel")
      .value("ORT_DISABLE_ALL", GraphOptimizationLevel::kDisableAll)
      .value("ORT_ENABLE_BASIC", GraphOptimizationLevel::kEnableBasic)
      .value("ORT_ENABLE_EXTENDED", GraphOptimizationLevel::kEnableExtended)
      .value("ORT_ENABLE_LAYOUT", GraphOptimizationLevel::kEnableLayout)
      .value("ORT_ENABLE_ALL", GraphOptimizationLevel::kEnableAll);
  py::enum_<ExecutionMode>(m, "ExecutionMode")
      .value("ORT_SEQUENTIAL", ExecutionMode::kSequential)
      .value("ORT_PARALLEL", ExecutionMode::kParallel);

  py::class_<PySessionOptions>(m, "SessionOptions",
                               "Options of one InferenceSession. Fields left alone keep the value of the "
                               "configuration file (InferenceSession(config=...)) and LOOM_* variables.")
      .def(py::init<>())
      .def_property(
          "intra_op_num_threads", [](const PySessionOptions& o) { return o.intra_op_num_threads.value_or(0); },
          [](PySessionOptions& o, int n) { o.intra_op_num_threads = checked_threads("intra_op_num_threads", n); })
      .def_property(
          "inter_op_num_threads", [](const PySessionOptions& o) { return o.inter_op_num_threads.value_or(0); },
          [](PySessionOptions& o, int n) { o.inter_op_num_threads = checked_threads("inter_op_num_threads", n); })
      .def_property(
          "graph_optimization_level",
          // Loom's default level is "extended".
          [](const PySessionOptions& o) {
            return o.graph_optimization_level.value_or(GraphOptimizationLevel::kEnableExtended);
          },
          [](PySessionOptions& o, GraphOptimizationLevel l) { o.graph_optimization_level = l; })
      .def_property(
          "execution_mode", [](const PySessionOptions& o) { return o.execution_mode.value_or(ExecutionMode::kSequential); },
          [](PySessionOptions& o, ExecutionMode m) { o.execution_mode = m; })
      .def_property(
          "log_severity_level", [](const PySessionOptions& o) { return o.log_severity_level.value_or(2); },
          [](PySessionOptions& o, int s) { o.log_severity_level = checked_severity(s); })
      .def_property(
          "fallback_policy",
          [](const PySessionOptions& o) { return fallback_policy_name(o.fallback.value_or(Config{}.fallback)); },
          [](PySessionOptions& o, const std::string& s) { o.fallback = fallback_of(s); },
          "'allow', 'warn' (default) or 'deny': whether nodes no requested provider takes may run on 'reference' "
          "(with a warning each under 'warn'), and whether a requested Loom provider that cannot be loaded is "
          "skipped ('allow' only) or an error")
      .def_readwrite("enable_profiling", &PySessionOptions::enable_profiling)
      .def_readwrite("profile_file_prefix", &PySessionOptions::profile_file_prefix)
      .def_readwrite("optimized_model_filepath", &PySessionOptions::optimized_model_filepath)
      .def_readwrite("plugin_dirs", &PySessionOptions::plugin_dirs,
                     "Plugin directories scanned before the configured and default ones")
      .def(
          "add_plugin_dir", [](PySessionOptions& o, const std::string& d) { o.plugin_dirs.push_back(d); },
          py::arg("path"))
      .def(
          "register_custom_ops_library",
          [](PySessionOptions& o, const py::object& path) {
            const std::string p = py::str(py::module_::import("os").attr("fspath")(path));
            if (!py::module_::import("os.path").attr("isfile")(p).cast<bool>())
              throw_status(not_found("custom-op library '" + p + "' does not exist"));
            o.custom_op_libraries.push_back(p);
          },
          py::arg("library_path"),
          "Loads this custom-op library (a Loom plugin declaring custom-op domains) into sessions made with "
          "these options.")
      .def_readonly("custom_op_libraries", &PySessionOptions::custom_op_libraries)
      .def_readwrite("enable_mem_pattern", &PySessionOptions::enable_mem_pattern,
                     "ONNX Runtime's; Loom always plans memory (no effect)")
      .def_readwrite("enable_cpu_mem_arena", &PySessionOptions::enable_cpu_mem_arena,
                     "ONNX Runtime's; Loom always uses its arenas (no effect)")
      .def_readwrite("enable_mem_reuse", &PySessionOptions::enable_mem_reuse,
                     "ONNX Runtime's; Loom always reuses buffers (no effect)")
      .def_readwrite("use_deterministic_compute", &PySessionOptions::use_deterministic_compute,
                     "ONNX Runtime's; Loom's kernels give the same results run after run (no effect)")
      .def_readwrite("logid", &PySessionOptions::logid, "ONNX Runtime's session log id (no effect)")
      .def_readwrite("log_verbosity_level", &PySessionOptions::log_verbosity_level,
                     "ONNX Runtime's verbose-log level (no effect: Loom has one log level)")
      .def(
          "add_session_config_entry",
          [](PySessionOptions& o, const std::string& key, const std::string& value) { o.config_entries[key] = value; },
          py::arg("config_key"), py::arg("config_value"),
          "ONNX Runtime's session config entries: session.intra_op.allow_spinning / "
          "session.inter_op.allow_spinning = '0' stop the inter-op workers' spinning; others are kept")
      .def(
          "get_session_config_entry",
          [](const PySessionOptions& o, const std::string& key) {
            auto it = o.config_entries.find(key);
            if (it == o.config_entries.end())
              throw_status(invalid_argument("SessionOptions does not have configuration with key: " + key));
            return it->second;
          },
          py::arg("config_key"));

  py::class_<PyRunOptions>(m, "RunOptions", "Options of one run: a tag, a log level, and terminate.")
      .def(py::init<>())
      .def_readwrite("logid", &PyRunOptions::logid)
      .def_property(
          "log_severity_level", [](const PyRunOptions& o) { return o.log_severity_level.value_or(-1); },
          [](PyRunOptions& o, int s) {
            if (s < 0) o.log_severity_level.reset();
            else o.log_severity_level = checked_severity(s);
          })
      .def_property(
          "terminate", [](const PyRunOptions& o) { return o.cancel->cancelled(); },
          [](PyRunOptions& o, bool t) {
            // Runs in flight keep the token they started with; a token stays
            // cancelled, so clearing the flag starts a fresh one.
            if (t) o.cancel->cancel();
            else if (o.cancel->cancelled()) o.cancel = std::make_shared<CancelToken>();
          },
          "Set to True to stop every run using these options at its next step (loom.Cancelled).");
}

}  // namespace loom::python
