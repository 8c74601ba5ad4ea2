// What a kernel or compiled partition sees of the run while one step
// computes (LOOM_KernelContext): its inputs, outputs allocated through the
// run (planned, bound or arena memory, under the run's limits), kernel
// scratch, the step's stream, the stop flag and subgraph runs. Made by
// RunState::run_step for each launch; scratch and unnamed outputs are given
// back (deferred while a stream may use them) when it goes.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "exec/executor.h"
#include "exec/run_state.h"
#include "exec/subgraph_plan.h"
#include "plugin_host/abi_objects.h"

namespace loom::exec {

class StepKernelContext final : public LOOM_KernelContext {
 public:
  // `timing`: where a profiled run keeps what the plugin reports; NULL when
  // the run is not profiled.
  StepKernelContext(RunState& run, const Step& step, StepTiming* timing)
      : run_(run), step_(step), timing_(timing), scratch_(step.outputs.size()) {}
  ~StepKernelContext() {
    for (RuntimeValue& v : scratch_) run_.drop(v);
    for (RuntimeValue& v : working_) run_.drop(v);
  }

  uint64_t input_count() const override { return step_.inputs.size(); }
  const LOOM_Tensor* input(uint64_t i) const override {
    const LOOM_Value* v = input_value(i);
    return v && v->kind == LOOM_VALUE_TENSOR ? &v->tensor : nullptr;
  }
  const LOOM_Value* input_value(uint64_t i) const override {
    if (i >= step_.inputs.size() || step_.inputs[i] == kNoSlot) return nullptr;
    return run_.value_of(step_.inputs[i]);
  }
  uint64_t output_count() const override { return step_.outputs.size(); }
  LOOM_Tensor* output(uint64_t i, int32_t dtype, const int64_t* dims, uint64_t rank) override {
    if (i >= step_.outputs.size()) {
      error_ = "output index " + std::to_string(i) + " out of range";
      return nullptr;
    }
    const SlotId s = step_.outputs[i];
    if (dtype == LOOM_DTYPE_UNDEFINED && (s == kNoSlot || run_.static_dtype(s) == LOOM_DTYPE_UNDEFINED))
      dtype = schema_dtype(i);
    Status why;
    LOOM_Tensor* t = run_.allocate(s, slot_value(i), dtype, dims, rank, &why, &step_);
    if (t == nullptr) refused(why);
    return t;
  }
  Status set_output(uint64_t i, std::unique_ptr<LOOM_Value> value) override {
    if (i >= step_.outputs.size()) return invalid_argument("output index " + std::to_string(i) + " out of range");
    return run_.set(step_.outputs[i], slot_value(i), std::move(value), &step_);
  }
  const LOOM_NodeView* node() const override { return step_.node_view; }
  void release_constant_input(uint64_t i) override {
    if (i >= step_.inputs.size()) return;
    if (run_.release_constant(step_.inputs[i]) && timing_ != nullptr) {
      std::lock_guard<std::mutex> lock(timing_mutex_);
      timing_->released_constants.push_back(run_.slot_name(step_.inputs[i]));
    }
  }
  bool profiling() const override { return timing_ != nullptr; }
  void profile_part(std::string name, uint64_t start_ns, uint64_t end_ns) override {
    if (timing_ == nullptr) return;
    using Clock = std::chrono::steady_clock;
    const Clock::time_point start{std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(start_ns))};
    const Clock::time_point end{std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(end_ns))};
    std::lock_guard<std::mutex> lock(timing_mutex_);
    timing_->parts.push_back({std::move(name), start, end});
  }
  LOOM_Stream* stream() const override { return run_.stream(step_.stream); }
  bool should_stop() const override { return run_.limits().cancelled() || run_.limits().timed_out(); }
  void* scratch(uint64_t bytes) override {
    Status why;
    RuntimeValue& rv = working_.emplace_back();
    void* p = run_.allocate_scratch(step_, bytes, rv, &why);
    if (p == nullptr) refused(why);
    return p;
  }

  Status run_subgraph(const std::string& attr, const LOOM_Value* const* inputs, uint64_t input_count,
                      LOOM_Value** outputs, uint64_t output_count) override {
    auto it = step_.subgraphs.find(attr);
    if (it == step_.subgraphs.end()) return not_found(step_.label + " has no subgraph attribute '" + attr + "'");
    const SubgraphPlan& sub = *it->second;
    if (input_count != sub.formal_inputs.size())
      return invalid_argument(step_.label + ": subgraph '" + attr + "' takes " +
                              std::to_string(sub.formal_inputs.size()) + " inputs, got " + std::to_string(input_count));
    std::map<std::string, const LOOM_Value*> feeds;
    for (size_t k = 0; k < input_count; ++k) feeds[sub.formal_inputs[k]] = inputs[k];
    for (const std::string& c : sub.captures) {
      auto slot = step_.captures.find(c);
      const LOOM_Value* v = slot == step_.captures.end() ? nullptr : run_.value_of(slot->second);
      if (v == nullptr) return fail(step_.label + ": outer value '" + c + "' is not available to subgraph '" + attr + "'");
      feeds[c] = v;
    }
    LOOM_ASSIGN_OR_RETURN(std::vector<ValuePtr> result,
                          execute(*sub.plan, run_.eps(), feeds, sub.plan->outputs, *sub.resources,
                                  ExecuteOptions{run_.limits()}));
    if (result.size() != output_count)
      return invalid_argument(step_.label + ": subgraph '" + attr + "' has " + std::to_string(result.size()) +
                              " outputs, the kernel asked for " + std::to_string(output_count));
    for (size_t k = 0; k < output_count; ++k) outputs[k] = result[k].release();
    return Status::ok();
  }

  // Why the host last refused the kernel an output or scratch ("" if never):
  // the step's error names it, with its code whatever code the kernel chose.
  const std::string& error() const { return error_; }
  StatusCode error_code() const { return error_code_; }

 private:
  void refused(const Status& why) {
    error_ = why.message();
    error_code_ = why.code();
  }
  int32_t schema_dtype(uint64_t i) const {
    if (i >= step_.output_types.size()) return LOOM_DTYPE_UNDEFINED;
    const Step::OutputTypeRule& r = step_.output_types[i];
    if (r.dtype != LOOM_DTYPE_UNDEFINED) return r.dtype;
    const LOOM_Tensor* in = r.same_as_input >= 0 ? input(static_cast<uint64_t>(r.same_as_input)) : nullptr;
    return in ? in->dtype : LOOM_DTYPE_UNDEFINED;
  }
  RuntimeValue& slot_value(uint64_t i) {
    const SlotId s = step_.outputs[i];
    // Unnamed outputs still get storage so kernels need not special-case them.
    return s == kNoSlot ? scratch_[i] : run_.values()[s];
  }
  RunState& run_;
  const Step& step_;
  StepTiming* timing_;
  std::mutex timing_mutex_;  // profile_part may be called from the kernel's threads
  std::vector<RuntimeValue> scratch_;  // unnamed outputs
  std::deque<RuntimeValue> working_;   // kernel_scratch buffers, freed (or deferred) when compute returns
  std::string error_;
  StatusCode error_code_ = StatusCode::kOk;
};


}  // namespace loom::exec
