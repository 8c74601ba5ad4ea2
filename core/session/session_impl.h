// Session internals shared by the files that implement Session.
#pragma once

#include <map>
#include <optional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "base/logging.h"
#include "exec/executor.h"
#include "exec/memory_pattern.h"
#include "exec/plan_builder.h"
#include "exec/run_recorder.h"
#include "exec/subgraph_plan.h"
#include "exec/thread_pool.h"
#include "loom/io_binding.h"
#include "loom/session.h"
#include "memory/memory_arenas.h"
#include "onnx/model_loader.h"
#include "partition/partitioner.h"
#include "profile/profiler.h"

namespace loom {

struct Session::Impl {
  std::shared_ptr<Environment> env;
  std::string model_name;
  ModelMetadata metadata;  // the model file's own fields
  std::shared_ptr<ir::Graph> graph;
  std::vector<std::unique_ptr<plugin_host::EpInstance>> ep_storage;
  std::vector<plugin_host::EpInstance*> eps;
  std::unique_ptr<exec::ExecutionPlan> plan;  // destroyed before the EPs (declared after them)
  std::unique_ptr<memory::MemoryArenas> arenas;  // every buffer of every run comes from here
  std::unique_ptr<exec::RunResourcePool> resources;
  // Runs recorded once and replayed (exec/run_recorder.h), when an EP asks
  // for it and the plan allows it. Destroyed before `resources`.
  std::unique_ptr<exec::RunRecorder> recorder;
  std::shared_ptr<exec::ThreadPool> inter_op;  // parallel sessions only
  // Intermediates whose size the static plan could not know (symbolic
  // dimensions): their memory is planned per input-shape signature.
  bool has_unplanned_intermediates = false;
  exec::MemoryPatternCache patterns;
  std::unique_ptr<profile::Profiler> profiler;  // config profiling.enabled only

  // Makes the profiler when the config asks for it; `start`: creation began.
  void start_profiling(profile::Clock::time_point start, const SessionOptions& options);
  std::string profile_path;  // where end_profiling writes
  // The run span of a profiled run (a no-op otherwise); numbers the run in
  // `options`.
  class RunSpan {
   public:
    RunSpan(const Impl& impl, const RunOptions& run_options, exec::ExecuteOptions& options)
        : profiler_(impl.profiler.get()), tag_(run_options.tag), start_(profile::Clock::now()) {
      if (profiler_ == nullptr) return;
      run_ = profiler_->next_run();
      options.profiler = profiler_;
      options.run = run_;
    }
    ~RunSpan() {
      if (profiler_ == nullptr) return;
      const double ts = profiler_->us(start_);
      profiler_->span(profile::kHostPid, profiler_->thread_lane(), "run", "run", ts, profiler_->now_us() - ts,
                      {{"run", run_}, {"tag", tag_}});
    }
    RunSpan(const RunSpan&) = delete;
    RunSpan& operator=(const RunSpan&) = delete;

   private:
    profile::Profiler* profiler_;
    std::string tag_;
    profile::Clock::time_point start_;
    int run_ = 0;
  };
  PlacementReport placement;
  std::vector<ValueInfo> inputs, outputs, overridable;
  std::set<std::string> required_inputs;

  ~Impl() {
    inter_op.reset();  // no run is in flight: its workers are idle
    recorder.reset();  // gives its resources back to the pool
    resources.reset();
    plan.reset();  // with the subgraph plans and their pools
    arenas.reset();  // before the EPs whose allocators hold its chunks
    eps.clear();
    ep_storage.clear();
  }

  partition::PartitionInputs partition_inputs;  // graph left empty; reused for subgraphs

  Status create_eps(const SessionOptions& options, size_t* priority_count, int* fallback);
  Status convert_precision(const partition::PartitionInputs& gate_inputs, bool to_float16);
  exec::PlanOptions plan_options(std::vector<std::string> extra_inputs);
  Expected<std::shared_ptr<const exec::SubgraphPlan>> plan_subgraph(const ir::Graph& subgraph);
  // A fused partition's nodes planned on the fallback provider alone
  // (exec/partition_fallback.h), built when its EP declines a run's inputs.
  Expected<std::shared_ptr<const exec::SubgraphPlan>> plan_on_fallback(const ir::Graph& nodes);
  Status prepare(onnxio::LoadedModel model, const SessionOptions& options);
  Status validate_inputs(const std::map<std::string, Value>& feeds) const;
  // ONNX Runtime takes a 1-element tensor for a scalar (rank-0) input (its
  // JavaScript wrappers send [1]): `feeds`, or a copy in `storage` where
  // such feeds are made scalars.
  const std::map<std::string, Value>& with_scalar_feeds(const std::map<std::string, Value>& feeds,
                                                        std::map<std::string, Value>& storage) const;
  // The run's log level and tag (none when RunOptions sets neither).
  Expected<std::optional<log::RunLogContext>> run_log(const RunOptions& options) const;
  // The run's cancel flag and the config's run limits (deadline from now).
  exec::RunLimits run_limits(const RunOptions& options) const;
  // The executor's observer for RunOptions::observe (NULL when none is
  // asked for); unknown value names are an error naming them.
  Expected<std::unique_ptr<exec::ValueObserver>> value_observer(const RunOptions& options) const;
  // A tensor given for input `name` has the declared dtype and shape.
  Status check_tensor_input(const std::string& name, DType dtype, const Dims& dims) const;
  // The input shapes as a cache key; false when an input is not a tensor.
  static bool shape_signature(const std::map<std::string, Value>& feeds, std::string* signature);
  // Sets `recorder` when an EP asks for recorded runs and the plan allows
  // them; logs why not otherwise.
  void make_recorder();
  // IO binding (session_io_binding.cpp): memory kinds by name, buffers in
  // them, and synchronous copies between them through the EPs' transfers.
  Expected<const LOOM_MemoryInfo*> memory_info(const std::string& memory) const;
  Expected<std::shared_ptr<DeviceBuffer>> allocate(const std::string& memory, DType dtype, const Dims& dims) const;
  Status copy(const DeviceTensor& src, const DeviceTensor& dst) const;
  // A graph value's declared kind, type and shape.
  ValueInfo declared(const std::string& name) const;
};


}  // namespace loom
