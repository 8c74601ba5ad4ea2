// Session: one model prepared for running (loaded, transformed, partitioned
// across EPs, planned). Session::run is safe to call from many threads at
// once: everything mutable during a run lives in a per-run state.
#pragma once

#include <atomic>
#include <map>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "loom/config.h"
#include "loom/environment.h"
#include "loom/io_binding.h"
#include "loom/status.h"
#include "loom/tensor.h"
#include "loom/value.h"

namespace loom {

// One dimension as declared by the model: a value, a symbol, or unknown.
struct DimInfo {
  int64_t value = -1;  // -1 when symbolic or unknown
  std::string symbol;  // e.g. "batch"; empty when not named
};

struct ValueInfo {
  std::string name;
  ValueKind kind = ValueKind::kTensor;  // for sequences/optionals, dtype is the element type
  DType dtype = DType::kUndefined;
  bool has_shape = false;  // false when even the rank is unknown
  std::vector<DimInfo> shape;
  // Maps and sequences of maps: the key type (int64 or string; dtype is
  // the values'); kUndefined otherwise.
  DType key_dtype = DType::kUndefined;
};

// Why each node runs where it runs.
struct PlacementReport {
  struct NodePlacement {
    std::string node_name;
    std::string op_type;
    std::string domain;
    std::string provider;
    std::string reason;
    std::vector<std::string> inputs, outputs;  // value names ("" for an omitted optional input)
  };
  struct ProviderSummary {
    std::string provider;
    int node_count = 0;
    std::map<std::string, int> op_types;  // op type -> count
  };
  std::vector<ProviderSummary> providers;
  std::vector<NodePlacement> nodes;
  // Human-readable rendering printed by `loom partition`.
  std::string to_string() const;
  // The short form (`loom partition --summary`): nodes per provider, then
  // why nodes did not go to a provider earlier in the priority list, each
  // reason once with the op types it held back.
  std::string summary() const;
};

// Stops runs from another thread: after cancel(), a run using this token
// ends at its next step boundary (also inside If / Loop / Scan bodies) with
// StatusCode::kCancelled, releasing everything it held. A token stays
// cancelled; one may serve many runs.
class CancelToken {
 public:
  void cancel() { flag_.store(true, std::memory_order_relaxed); }
  bool cancelled() const { return flag_.load(std::memory_order_relaxed); }
  const std::atomic<bool>* flag() const { return &flag_; }

 private:
  std::atomic<bool> flag_{false};
};

// Memory of one kind (host "cpu" or an EP's device memory) as the session
// uses it: what the memory plan reserves per run, and what the session's
// arena for that kind holds now and held at most. Bytes.
struct MemoryStats {
  std::string memory;
  int64_t planned_peak_bytes = 0;   // the plan's buffers per run (known before the first run)
  int64_t limit_bytes = 0;          // the configured arena limit; 0 = none
  int64_t reserved_bytes = 0;       // held from the device now
  int64_t in_use_bytes = 0;         // handed out now (runs in flight)
  int64_t peak_in_use_bytes = 0;
  int64_t peak_reserved_bytes = 0;
  int64_t allocations = 0;          // arena allocations so far (planned blocks and unplanned tensors)
  int64_t failed_allocations = 0;   // refused by the limit or the device
};

// What the model file says about itself (ModelProto's fields), as ONNX
// Runtime's get_modelmeta() reports it.
struct ModelMetadata {
  std::string producer_name;
  std::string producer_version;
  std::string graph_name;
  std::string graph_description;  // GraphProto.doc_string
  std::string domain;
  std::string description;        // ModelProto.doc_string
  int64_t version = 0;            // model_version
  int64_t ir_version = 0;
  std::map<std::string, std::string> custom_metadata_map;  // metadata_props
};

struct RunOptions {
  std::shared_ptr<CancelToken> cancel;  // optional
  // Names the run in its log lines and errors ("model: [tag] ...").
  std::string tag;
  // The log level for this run only ("trace" ... "off"; empty: the
  // environment's). At "debug" the executor logs every step with its time.
  std::string log_level;
  // Watching values as the run makes them (calibration, debugging):
  // `observe` is called with each tensor named in `observed_values` right
  // after the step that makes it, on the thread that ran the step (so it
  // must be thread-safe under parallel execution). The tensor may share the
  // run's storage: copy what you keep past the call. Only tensors in host
  // memory of the top-level graph are seen; nodes fused by optimization or
  // compiled into one partition make no intermediate values, so use
  // optimization level "disabled" and a kernel EP such as "reference" to
  // see every value of the model. Naming a value the session's plan does
  // not have is an error (Session::observable_values lists them).
  std::vector<std::string> observed_values;
  std::function<void(const std::string& name, const Tensor& value)> observe;
};

struct SessionOptions {
  // Overrides env config fields when set (non-empty / explicitly given).
  std::vector<std::string> providers;
  // When non-empty, the graph is saved here as ONNX right after the graph
  // passes (before partitioning): the model Loom optimized, loadable by any
  // ONNX tool. Initializers of at least `optimized_model_external_threshold`
  // bytes go to `<path>.data`. Session creation fails if saving fails.
  std::string optimized_model_path;
  size_t optimized_model_external_threshold = 1024;
  // Profile this session even when the environment's config does not
  // (Config::profiling_enabled); `profile_path` (if set) overrides where
  // end_profiling writes.
  bool profiling = false;
  std::string profile_path;
};

class Session {
 public:
  static Expected<std::unique_ptr<Session>> create(std::shared_ptr<Environment> env,
                                                   const std::string& model_path,
                                                   const SessionOptions& options = {});
  static Expected<std::unique_ptr<Session>> create_from_bytes(std::shared_ptr<Environment> env,
                                                              const std::string& model_bytes,
                                                              const SessionOptions& options = {});
  ~Session();

  const std::vector<ValueInfo>& inputs() const;
  const std::vector<ValueInfo>& outputs() const;
  // Graph inputs that also have an initializer: a run may feed them, and
  // otherwise uses the initializer (ONNX Runtime's overridable
  // initializers). Not in inputs(), which lists what a run must feed.
  const std::vector<ValueInfo>& overridable_initializers() const;
  // The values a run can show RunOptions::observe: every value of the
  // top-level graph the plan computes (not inputs or initializers), in plan
  // order, with its static type.
  std::vector<ValueInfo> observable_values() const;

  // Runs the model. `inputs` maps graph input names to values; every required
  // input must be given with a matching dtype and rank. `output_names` empty
  // means all outputs, in graph order. Thread-safe.
  Expected<std::vector<Tensor>> run(const std::map<std::string, Tensor>& inputs,
                                    const std::vector<std::string>& output_names = {}) const;
  Expected<std::vector<Tensor>> run(const std::map<std::string, Tensor>& inputs,
                                    const std::vector<std::string>& output_names, const RunOptions& options) const;
  // The same for models with sequence or optional inputs/outputs. `run` is
  // this with tensors only (it fails if an output is not a tensor).
  Expected<std::vector<Value>> run_values(const std::map<std::string, Value>& inputs,
                                          const std::vector<std::string>& output_names = {},
                                          const RunOptions& options = {}) const;

  // Runs on the buffers bound in `binding` (see loom/io_binding.h): inputs
  // read where they are, outputs written into bound buffers or left in the
  // bound memory kind. Every required input must be bound; only bound
  // outputs are delivered. Thread-safe (one binding per run at a time).
  Status run(IoBinding& binding, const RunOptions& options = {}) const;
  // A buffer in memory kind `memory` ("cpu" or an EP's), freed when the last
  // holder lets go (before the session is destroyed).
  Expected<std::shared_ptr<DeviceBuffer>> allocate(const std::string& memory, DType dtype, const Dims& dims) const;
  // Synchronous copies between host tensors and buffers in any memory kind
  // of the session, through the EPs' data transfers.
  Expected<Tensor> copy_to_host(const DeviceTensor& src) const;
  Status copy_from_host(const Tensor& src, const DeviceTensor& dst) const;

  // Profiling (config profiling.enabled): writes everything recorded so far
  // — session phases, every run's steps, device spans — to the config's
  // profiling.path as Chrome-trace / Perfetto JSON (read it with `loom
  // profile summarize|timeline`, chrome://tracing or ui.perfetto.dev) and
  // returns the path. Recording goes on; a later call rewrites the file.
  Expected<std::string> end_profiling() const;

  const PlacementReport& placement() const;
  // The model file's own description of itself (producer, version, custom
  // metadata such as class names).
  const ModelMetadata& metadata() const;
  // The execution plan as text: steps (kernel launches, partition launches,
  // copies) with their values, and the planned arena per memory kind.
  std::string describe_plan() const;
  // Bytes the memory planner reserves for intermediate values at peak, for
  // the shapes known when the plan was made.
  int64_t planned_peak_bytes() const;
  // Per memory kind: planned bytes and the arena's current and peak use.
  // Thread-safe.
  std::vector<MemoryStats> memory_stats() const;
  // Memory plans made at run time for models with symbolic dimensions: one
  // per input-shape signature seen (a bounded, least-recently-used cache).
  size_t memory_pattern_count() const;

 private:
  Session();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace loom
