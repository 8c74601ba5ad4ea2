#include "exec/run_recorder.h"

#include "base/logging.h"

namespace loom::exec {
namespace {

// A view of tensor `v` (device storage the recording keeps).
std::unique_ptr<LOOM_Value> edge_view(const LOOM_Value& v) {
  auto out = std::make_unique<LOOM_Value>();
  out->kind = v.kind;
  out->tensor = v.tensor;
  return out;
}

bool is_input_copy(const Step& s) { return s.kind == StepKind::kCopy && !s.constant_copy; }

}  // namespace

RunRecorder::RunRecorder(const ExecutionPlan& plan, const std::vector<plugin_host::EpInstance*>& eps,
                         CaptureLayout layout, RunResourcePool& pool)
    : plan_(plan), eps_(eps), layout_(std::move(layout)), pool_(pool) {}

RunRecorder::~RunRecorder() {
  std::lock_guard<std::mutex> lock(mutex_);
  release_recording();
}

std::string RunRecorder::off_reason() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return off_;
}

void RunRecorder::release_recording() {
  if (resources_ != nullptr) {
    LOOM_Stream* s = resources_->streams[layout_.stream];
    if (s != nullptr) (void)s->synchronize(s->state);  // replays may still use the buffers
  }
  if (work_ != nullptr) work_->release(work_);
  work_ = nullptr;
  for (auto [arena, pointer] : kept_) arena->free(pointer);
  kept_.clear();
  edges_.clear();
  if (resources_ != nullptr) pool_.release(std::move(resources_));
  signature_.clear();
}

void RunRecorder::turn_off(const std::string& why) {
  off_ = why;
  log::write(spdlog::level::warn, "recording of runs is off for this session: " + why);
}

std::optional<Expected<std::vector<ValuePtr>>> RunRecorder::run(
    const std::map<std::string, const LOOM_Value*>& inputs, const std::vector<SlotId>& outputs,
    const std::string& signature, const RunLimits& limits) {
  std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock() || !off_.empty() || signature.empty()) return std::nullopt;
  if (work_ != nullptr) {
    if (signature != signature_) return std::nullopt;
    return replay(inputs, outputs, limits);
  }
  // The first run with these shapes warms the EP up (algorithm choices,
  // library handles, weights on the device); the next one is recorded.
  if (signature != warm_signature_) {
    warm_signature_ = signature;
    return std::nullopt;
  }
  auto result = record(inputs, outputs, limits);
  if (result && *result) signature_ = signature;
  return result;
}

std::optional<Expected<std::vector<ValuePtr>>> RunRecorder::record(
    const std::map<std::string, const LOOM_Value*>& inputs, const std::vector<SlotId>& outputs,
    const RunLimits& limits) {
  auto acquired = pool_.acquire();
  if (!acquired) return Expected<std::vector<ValuePtr>>(acquired.status());
  resources_ = std::move(*acquired);
  const plugin_host::EpInstance& ep = *eps_[layout_.ep];
  std::optional<Expected<std::vector<ValuePtr>>> result;
  std::string off;  // set when the EP could not record: the run is repeated the usual way
  {
    RunState run(plan_, eps_, *resources_, limits, false);
    run.keep_device_storage(&kept_);
    run.bind(inputs);
    LOOM_Stream* stream = run.stream(layout_.stream);
    auto fail = [&](Status st) { result = Expected<std::vector<ValuePtr>>(std::move(st)); };
    for (size_t i : layout_.prefix) {
      const Step& s = plan_.steps[i];
      if (Status st = run.run_step(s); !st) {
        fail(st);
        break;
      }
      if (is_input_copy(s)) edges_[s.outputs[0]] = edge_view(*run.value_of(s.outputs[0]));
    }
    if (!result) {
      if (Status st = ep.begin_capture(stream); !st) off = st.message();
    }
    if (!result && off.empty()) {
      Status launched;
      for (size_t i : layout_.region) {
        launched = run.run_step(plan_.steps[i]);
        if (!launched) break;
      }
      auto work = ep.end_capture(stream);
      if (!launched) off = "recording " + launched.message();
      else if (!work) off = work.status().message();
      if (work) {
        if (launched) work_ = *work;
        else (*work)->release(*work);
      }
    }
    if (!result && off.empty()) {
      if (Status st = plugin_host::from_abi(work_->replay(work_->state, stream)); !st)
        off = "replaying the recording: " + st.message();
    }
    if (!result && off.empty()) {
      for (size_t i : layout_.suffix) {
        const Step& s = plan_.steps[i];
        if (s.kind == StepKind::kCopy) edges_[s.inputs[0]] = edge_view(*run.value_of(s.inputs[0]));
        if (Status st = run.run_step(s); !st) {
          fail(st.with_context("after the recorded steps"));
          break;
        }
      }
    }
    if (!result && off.empty()) {
      Status st = run.synchronize_streams();
      std::vector<ValuePtr> values;
      for (size_t i = 0; st && i < outputs.size(); ++i) {
        auto v = run.take_output(outputs[i]);
        if (!v) st = v.status();
        else values.push_back(std::move(*v));
      }
      if (st) {
        ++recordings_;
        result = Expected<std::vector<ValuePtr>>(std::move(values));
      } else {
        fail(st);
      }
    }
  }  // the run's stream is idle here, and what it let go of is in kept_
  if (!off.empty()) turn_off(off);
  if (!result || !*result) release_recording();
  return result;
}

Expected<std::vector<ValuePtr>> RunRecorder::replay(const std::map<std::string, const LOOM_Value*>& inputs,
                                                    const std::vector<SlotId>& outputs, const RunLimits& limits) {
  RunBindings bindings;  // input copies write where the recording reads
  for (size_t i : layout_.prefix) {
    const Step& s = plan_.steps[i];
    if (!is_input_copy(s)) continue;
    const LOOM_Tensor& t = edges_.at(s.outputs[0])->tensor;
    RunBindings::Output& out = bindings.outputs[s.outputs[0]];
    out.name = plan_.slots[s.outputs[0]].name;
    out.dtype = static_cast<DType>(t.dtype);
    out.dims = t.dims;
    out.data = t.data;
  }
  RunState run(plan_, eps_, *resources_, limits, false);
  run.set_bindings(&bindings);
  run.bind(inputs);
  for (size_t i : layout_.prefix) {
    const Step& s = plan_.steps[i];
    if (s.constant_copy) continue;  // on the device since the first run
    LOOM_RETURN_IF_ERROR(run.run_step(s));
  }
  LOOM_Stream* stream = run.stream(layout_.stream);
  LOOM_RETURN_IF_ERROR(plugin_host::from_abi(work_->replay(work_->state, stream))
                           .with_context("provider '" + eps_[layout_.ep]->name() + "': replaying the recorded run"));
  for (const auto& [slot, value] : edges_) {
    RuntimeValue& rv = run.values()[slot];
    if (rv.ready) continue;  // an input copy's destination, bound above
    rv.borrowed = value.get();
    rv.ready = true;
  }
  for (size_t i : layout_.suffix) LOOM_RETURN_IF_ERROR(run.run_step(plan_.steps[i]));
  LOOM_RETURN_IF_ERROR(run.synchronize_streams());
  std::vector<ValuePtr> values;
  for (SlotId slot : outputs) {
    LOOM_ASSIGN_OR_RETURN(ValuePtr v, run.take_output(slot));
    values.push_back(std::move(v));
  }
  ++replays_;
  return values;
}

}  // namespace loom::exec
