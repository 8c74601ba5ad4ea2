// The state of one run of an ExecutionPlan: every slot's value, the run's
// resources (arenas, streams, events) and how steps are carried out on them.
// Executors (exec/executor.h) decide the order; a RunState runs one step at
// a time per thread, and several threads at once in parallel runs.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "exec/execution_plan.h"
#include "exec/memory_pattern.h"
#include "exec/run_resources.h"
#include "exec/run_limits.h"
#include "memory/arena.h"
#include "plugin_host/abi_objects.h"

namespace loom::exec {

struct RunBindings;

// What the profiler records of one step.
struct StepTiming {
  double kernel_us = 0;  // inside the plugin's compute or copy call
  std::string inputs;    // "float[1,3,224,224]; int64[2]"
  std::string outputs;
  uint64_t bytes = 0;    // copies
  // Pieces of the work the plugin named (LOOM_HostApi::kernel_profile_part).
  struct Part {
    std::string name;
    std::chrono::steady_clock::time_point start, end;
  };
  std::vector<Part> parts;
  // Constant inputs the plugin let the host free (kernel_release_constant_input).
  std::vector<std::string> released_constants;
};

using ValuePtr = std::unique_ptr<LOOM_Value>;

// Device storage a run has let go of while a stream may still use it: freed
// once every stream is synchronized.
using DeferredFrees = std::vector<std::pair<memory::Arena*, void*>>;

// The value of one slot during a run: owned here, or borrowed from the
// caller (graph inputs) for the length of the run.
struct RuntimeValue {
  LOOM_Value v;
  const LOOM_Value* borrowed = nullptr;
  std::shared_ptr<const LOOM_Value> shared;  // keeps `borrowed` alive when set (a plan's constant value)
  bool ready = false;
  // Its shape contradicts the slot's static type where the model declared
  // it, or downstream of such a value (RunState::check_static_shape).
  bool drifted = false;
  void* device = nullptr;          // storage from `arena` (unplanned buffers)
  memory::Arena* arena = nullptr;  // frees `device`

  const LOOM_Value* value() const { return borrowed ? borrowed : &v; }
  // Frees the storage now (RunState::drop defers it when streams may still
  // use it).
  void reset() {
    if (device != nullptr) arena->free(device);
    device = nullptr;
    v = LOOM_Value{};
    borrowed = nullptr;
    shared.reset();
    ready = false;
    drifted = false;
  }
};

class RunState {
 public:
  // `parallel`: steps may run concurrently in any order the plan's
  // dependencies allow, so planned arena offsets (which assume plan order)
  // are not used and values die when their last reader is done
  // (finish_step) instead of at the step the plan names.
  RunState(const ExecutionPlan& plan, const std::vector<plugin_host::EpInstance*>& eps, RunResources& resources,
           const RunLimits& limits, bool parallel = false);
  // Waits for every stream (queued work may still write values), then frees.
  ~RunState() {
    if (!streams_idle_) (void)synchronize_streams();  // nothing to report from a destructor
    for (RuntimeValue& v : values_) {
      if (keep_ != nullptr && v.device != nullptr) {
        keep_->emplace_back(v.arena, v.device);
        v.device = nullptr;
      }
      v.reset();
    }
    free_deferred();
    let_go_of_constants();
  }
  RunState(const RunState&) = delete;
  RunState& operator=(const RunState&) = delete;

  // Blocks until every stream of the run is idle; the first failure, naming
  // the provider whose stream reported it.
  Status synchronize_streams() {
    Status first;
    for (size_t i = 0; i < resources_.streams.size(); ++i) {
      LOOM_Stream* s = resources_.streams[i];
      if (s == nullptr) continue;
      Status st = plugin_host::from_abi(s->synchronize(s->state));
      if (!st && first.is_ok()) first = st.with_context("stream of provider '" + plan_.streams[i].name + "'");
    }
    if (first.is_ok()) {
      free_deferred();
      streams_idle_ = true;
    }
    return first;
  }
  // Drops a value the run no longer needs. Device storage is held until the
  // streams are idle when some stream may still read or write it.
  void drop(RuntimeValue& rv);
  LOOM_Stream* stream(size_t index) const { return resources_.streams[index]; }
  // Sequential runs with dynamic shapes: unplanned intermediates go to
  // `pattern` offsets in `blocks` (per memory kind) when it has them, and
  // their sizes are recorded in `recorded` (one entry per slot) when set.
  void set_dynamic_memory(const MemoryPattern* pattern, std::vector<void*> blocks, std::vector<int64_t>* recorded);
  // Recording a run (exec/run_recorder.h): storage the run lets go of is
  // handed to `into` instead of being freed, so the recorded work's buffers
  // stay the recording's for as long as it is replayed.
  void keep_device_storage(DeferredFrees* into) { keep_ = into; }
  // IO binding (may be NULL): skipped copies and where bound outputs go.
  void set_bindings(const RunBindings* bindings) { bindings_ = bindings; }
  // Parallel runs: drops what `step` was the last reader of.
  void finish_step(const Step& step);

  void bind(const std::map<std::string, const LOOM_Value*>& inputs);

  // Allocates a tensor for `slot` with dtype and dims, made by `step` (NULL:
  // not by a step); NULL plus a reason on failure.
  LOOM_Tensor* allocate(SlotId slot, RuntimeValue& rv, int32_t dtype, const int64_t* dims, uint64_t rank,
                        Status* why, const Step* step = nullptr);
  // LOOM_HostApi::kernel_scratch for `step`: `bytes` from the arena of the
  // step's memory, refused over limits.max_tensor_mb before anything is
  // allocated. `rv` owns it (drop() frees it, deferred while streams may
  // still use it). NULL plus a reason on failure.
  void* allocate_scratch(const Step& step, uint64_t bytes, RuntimeValue& rv, Status* why);
  // Storage for a slot bound by IO binding: the caller's buffer, or one
  // made for the caller. NULL data with `why` set on failure.
  void* bound_storage(const RunBindings& b, SlotId slot, DType dtype, const Dims& dims, int64_t bytes, Status* why);

  Status set(SlotId slot, RuntimeValue& rv, std::unique_ptr<LOOM_Value> value, const Step* step = nullptr);
  // A tensor of element type `dtype` may go to `slot`: the model's static
  // type (declared or inferred) says the same, or says nothing.
  Status check_static_dtype(SlotId slot, int32_t dtype) const;
  // A tensor of `dims` made by `step` may go to `slot` (plans with
  // check_shapes): the rank and every fixed dim of the slot's static type
  // agree. A disagreement is only logged, as ONNX Runtime does, and `rv` is
  // marked drifted, where the model declared the shape
  // (ir::ValueType::declared) or one of the step's inputs drifted already:
  // a wrong declaration, and what inference derived from it, is the model's
  // mistake; otherwise the provider broke its contract and the run fails.
  Status check_static_shape(SlotId slot, const Dims& dims, const Step* step, RuntimeValue& rv) const;

  // `timing` (profiling, may be NULL): filled with the time inside the
  // plugin's call, the shapes read and made, and bytes copied.
  Status run_step(const Step& step, StepTiming* timing = nullptr);
  Status run_sync_step(const Step& step);
  Status run_copy(const Step& step, StepTiming* timing);
  Status copy_constant_once(const Step& step, StepTiming* timing);

  // Drops the session's bytes of constant `slot` when `step` is its only
  // reader and it is not an overridable graph input (see
  // LOOM_HostApi::kernel_release_constant_input). This run keeps its own
  // reference until it ends. True when the bytes go (now or when runs in
  // flight end), false when the host keeps them.
  bool release_constant(SlotId slot);

  Expected<ValuePtr> take_output(SlotId slot);

  int32_t static_dtype(SlotId slot) const { return static_cast<int32_t>(plan_.slots[slot].type.dtype); }
  const std::string& slot_name(SlotId slot) const { return plan_.slots[slot].name; }
  const LOOM_Value* value_of(SlotId slot) const { return values_[slot].ready ? values_[slot].value() : nullptr; }
  std::vector<RuntimeValue>& values() { return values_; }
  const std::vector<plugin_host::EpInstance*>& eps() const { return eps_; }
  const RunLimits& limits() const { return limits_; }

 private:
  // "float[2,3]; -" for the slots' current values ("-" when absent).
  std::string describe(const std::vector<SlotId>& slots) const;
  // The run no longer uses the session's device constants it bound; those
  // their reader released are freed once no run uses them (the streams are
  // idle: called last by the destructor).
  void let_go_of_constants();
  // A device constant's reader packed it: later runs bind it without data.
  bool release_device_constant(SlotId slot);
  // A released constant's value in this run: its dtype, dims and memory, no data.
  static void keep_type_only(RuntimeValue& rv);
  // Partitions whose EP declined a run's inputs (exec/partition_fallback.h).
  bool no_output_made(const Step& step) const;
  Status run_on_fallback(const Step& step, const Status& declined);
  void free_deferred() {
    std::lock_guard<std::mutex> lock(deferred_mutex_);
    if (keep_ != nullptr) keep_->insert(keep_->end(), deferred_.begin(), deferred_.end());
    else
      for (auto [arena, pointer] : deferred_) arena->free(pointer);
    deferred_.clear();
  }

  const ExecutionPlan& plan_;
  const std::vector<plugin_host::EpInstance*>& eps_;
  std::vector<void*>& planned_;  // base of the planned buffers per memory kind
  RunResources& resources_;
  RunLimits limits_;
  std::vector<RuntimeValue> values_;
  std::mutex deferred_mutex_;
  DeferredFrees deferred_;
  std::atomic<bool> streams_idle_{true};  // false once work may be queued on a stream
  const bool parallel_;
  const MemoryPattern* pattern_ = nullptr;
  std::vector<void*> pattern_blocks_;
  std::vector<int64_t>* recorded_ = nullptr;
  const RunBindings* bindings_ = nullptr;
  DeferredFrees* keep_ = nullptr;
  std::unique_ptr<std::atomic<int>[]> readers_left_;  // parallel runs: per slot
  std::vector<SlotId> constants_used_;  // device constants bound (guarded by the DeviceConstants mutex)
};


}  // namespace loom::exec
