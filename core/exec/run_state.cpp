#include "exec/run_state.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <limits>

#include "base/logging.h"
#include "exec/executor.h"
#include "exec/partition_fallback.h"
#include "exec/step_kernel_context.h"
#include "plugin_host/plugin_calls.h"
#include "onnx/tensor_proto.h"

namespace loom::exec {

RunState::RunState(const ExecutionPlan& plan, const std::vector<plugin_host::EpInstance*>& eps,
                   RunResources& resources, const RunLimits& limits, bool parallel)
    : plan_(plan),
      eps_(eps),
      planned_(resources.planned),
      resources_(resources),
      limits_(limits),
      values_(plan.slots.size()),
      parallel_(parallel) {
  if (!parallel_) return;
  readers_left_ = std::make_unique<std::atomic<int>[]>(plan.slots.size());
  for (size_t s = 0; s < plan.slots.size(); ++s) readers_left_[s].store(plan.slots[s].readers);
}

void RunState::set_dynamic_memory(const MemoryPattern* pattern, std::vector<void*> blocks,
                                  std::vector<int64_t>* recorded) {
  pattern_ = pattern;
  pattern_blocks_ = std::move(blocks);
  recorded_ = recorded;
  if (recorded_ != nullptr) recorded_->assign(plan_.slots.size(), 0);
}

void* RunState::bound_storage(const RunBindings& b, SlotId slot, DType dtype, const Dims& dims, int64_t bytes,
                              Status* why) {
  const RunBindings::Output& out = b.outputs.at(slot);
  if (out.data == nullptr) {
    auto p = out.allocate(dtype, dims);
    if (!p) {
      *why = p.status().with_context("output '" + out.name + "'");
      return nullptr;
    }
    return *p;
  }
  if (out.dtype != dtype || out.dims != dims) {
    *why = invalid_argument("output '" + out.name + "' is bound to a " + dtype_name(out.dtype) + " " +
                            dims_string(out.dims) + " buffer, but the run makes " + dtype_name(dtype) + " " +
                            dims_string(dims));
    return nullptr;
  }
  (void)bytes;
  return out.data;
}

void RunState::drop(RuntimeValue& rv) {
  if (rv.device != nullptr && resources_.streams.size() > 1) {
    std::lock_guard<std::mutex> lock(deferred_mutex_);
    deferred_.emplace_back(rv.arena, rv.device);
    rv.device = nullptr;
  }
  rv.reset();
}

// A value read on an asynchronous stream may still be in use when its last
// reader's launch returns; with several streams, parallel runs keep every
// value until the run ends rather than track when the host knows.
void RunState::finish_step(const Step& step) {
  if (!parallel_ || resources_.streams.size() > 1) return;
  for (SlotId s : step.reads()) {
    if (plan_.slots[s].kind != SlotKind::kIntermediate) continue;
    if (readers_left_[s].fetch_sub(1) == 1) drop(values_[s]);
  }
}

void RunState::bind(const std::map<std::string, const LOOM_Value*>& inputs) {
    // Constants from the pool's store (released ones: dtype and dims only,
    // the step that reads them keeps its own copy).
    for (size_t s = 0; s < plan_.slots.size(); ++s) {
      if (plan_.slots[s].kind != SlotKind::kConstant) continue;
      std::shared_ptr<const LOOM_Value> value =
          resources_.host_constants->value(static_cast<SlotId>(s), &plan_.memories[0].info);
      RuntimeValue& rv = values_[s];
      rv.shared = value;
      rv.borrowed = value.get();
      rv.ready = true;
    }
    for (const auto& [name, slot] : plan_.inputs) {
      auto it = inputs.find(name);
      if (it == inputs.end() || it->second == nullptr) continue;
      RuntimeValue& rv = values_[slot];
      rv.reset();
      rv.borrowed = it->second;
      rv.ready = true;
    }
  }

LOOM_Tensor* RunState::allocate(SlotId slot, RuntimeValue& rv, int32_t dtype, const int64_t* dims, uint64_t rank,
                        Status* why, const Step* step) {
    if (rv.ready) {
      *why = invalid_argument("output allocated twice");
      return nullptr;
    }
    const Slot* s = slot == kNoSlot ? nullptr : &plan_.slots[slot];
    if (dtype == LOOM_DTYPE_UNDEFINED && s != nullptr) dtype = static_cast<int32_t>(s->type.dtype);
    if (dtype == LOOM_DTYPE_UNDEFINED) {
      *why = invalid_argument("element type unknown (the kernel must name it)");
      return nullptr;
    }
    if (Status st = check_static_dtype(slot, dtype); !st) {
      *why = st;
      return nullptr;
    }
    Dims d(dims, dims + rank);
    if (Status st = check_static_shape(slot, d, step, rv); !st) {
      *why = st;
      return nullptr;
    }
    auto count = checked_element_count(d);
    if (!count) {
      *why = count.status();
      return nullptr;
    }
    const DType t = static_cast<DType>(dtype);
    if (limits_.max_tensor_bytes > 0 && dtype_size(t) > 0 &&
        static_cast<uint64_t>(*count) > static_cast<uint64_t>(limits_.max_tensor_bytes) / dtype_size(t)) {
      *why = Status(StatusCode::kOutOfMemory, "output " + dtype_name(t) + dims_string(d) + " would exceed " +
                                                  onnxio::describe_byte_limit("max_tensor_mb", limits_.max_tensor_bytes));
      return nullptr;
    }
    const size_t memory = s ? s->memory : 0;
    LOOM_Value& v = rv.v;
    v.kind = LOOM_VALUE_TENSOR;
    v.tensor.dtype = dtype;
    v.tensor.dims = d;
    v.tensor.count = static_cast<uint64_t>(*count);
    v.tensor.memory = &plan_.memories[memory].info;
    if (t == DType::kString) {
      v.owned = Tensor::from_strings(d, std::vector<std::string>(static_cast<size_t>(*count)));
      v.tensor.strings = &v.owned.mutable_strings();
    } else {
      const size_t esize = dtype_size(t);
      if (esize == 0) {
        *why = not_implemented("unsupported element type " + dtype_name(t));
        return nullptr;
      }
      const int64_t bytes = *count * static_cast<int64_t>(esize);
      const bool intermediate = s != nullptr && s->kind == SlotKind::kIntermediate;
      if (bindings_ != nullptr && bindings_->outputs.count(slot)) {
        v.tensor.data = bound_storage(*bindings_, slot, t, d, bytes, why);
        if (v.tensor.data == nullptr && bytes > 0) return nullptr;
      } else if (!parallel_ && intermediate && s->planned_offset >= 0 && bytes <= s->planned_bytes &&
          planned_[memory] != nullptr) {
        v.tensor.data = static_cast<char*>(planned_[memory]) + s->planned_offset;
      } else if (pattern_ != nullptr && intermediate && pattern_->offsets[slot] >= 0 &&
                 bytes <= pattern_->bytes[slot] && pattern_blocks_[memory] != nullptr) {
        v.tensor.data = static_cast<char*>(pattern_blocks_[memory]) + pattern_->offsets[slot];
      } else if (memory == 0 && !intermediate) {
        // Graph outputs (and values set aside for the caller) live in a
        // Tensor of their own, handed to the caller without a copy.
        auto tensor = Tensor::zeros(t, d);
        if (!tensor) {
          *why = tensor.status();
          return nullptr;
        }
        v.owned = std::move(*tensor);
        v.tensor.data = v.owned.mutable_data();
      } else {
        memory::Arena* arena = resources_.arenas[memory];
        auto p = arena->allocate(bytes);
        if (!p) {
          *why = p.status();
          return nullptr;
        }
        rv.device = *p;
        rv.arena = arena;
        if (recorded_ != nullptr && intermediate) (*recorded_)[slot] = std::max((*recorded_)[slot], bytes);
        v.tensor.data = rv.device;
      }
    }
    rv.ready = true;
    return &v.tensor;
  }

void* RunState::allocate_scratch(const Step& step, uint64_t bytes, RuntimeValue& rv, Status* why) {
  const std::string what = "scratch of " + std::to_string(bytes) + " bytes";
  if (limits_.max_tensor_bytes > 0 && bytes > static_cast<uint64_t>(limits_.max_tensor_bytes)) {
    *why = Status(StatusCode::kOutOfMemory,
                  what + " would exceed " + onnxio::describe_byte_limit("max_tensor_mb", limits_.max_tensor_bytes));
    return nullptr;
  }
  if (bytes > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    *why = Status(StatusCode::kOutOfMemory, what + " is past what any memory holds");
    return nullptr;
  }
  memory::Arena* arena = resources_.arenas[step.memory];
  auto p = arena->allocate(static_cast<int64_t>(bytes));
  if (!p) {
    *why = p.status().with_context(what);
    return nullptr;
  }
  rv.device = *p;
  rv.arena = arena;
  return *p;
}

Status RunState::check_static_dtype(SlotId slot, int32_t dtype) const {
  if (slot == kNoSlot) return Status::ok();
  const Slot& s = plan_.slots[slot];
  const DType declared = s.type.kind == ir::ValueKind::kTensor ? s.type.dtype : DType::kUndefined;
  if (declared == DType::kUndefined || static_cast<int32_t>(declared) == dtype) return Status::ok();
  return invalid_graph("value '" + s.name + "' is " + dtype_name(declared) + " by the model's types, but the " +
                       "node makes " + dtype_name(static_cast<DType>(dtype)) +
                       " (a declared type that contradicts what computes it, e.g. an If branch's output)");
}

Status RunState::check_static_shape(SlotId slot, const Dims& dims, const Step* step, RuntimeValue& rv) const {
  if (slot == kNoSlot || !plan_.check_shapes) return Status::ok();
  const Slot& s = plan_.slots[slot];
  if (s.type.kind != ir::ValueKind::kTensor || !s.type.has_shape) return Status::ok();
  bool agree = s.type.dims.size() == dims.size();
  for (size_t i = 0; agree && i < dims.size(); ++i)
    agree = s.type.dims[i].value < 0 || s.type.dims[i].value == dims[i];
  if (agree) return Status::ok();
  const std::string made = dims_string(dims), typed = s.type.to_string();
  bool inputs_drifted = false;
  if (step != nullptr)
    for (SlotId in : step->inputs) inputs_drifted = inputs_drifted || (in != kNoSlot && values_[in].drifted);
  if (s.type.declared || inputs_drifted) {
    rv.drifted = true;
    if (resources_.shape_warnings->first(slot))
      log::logger()->warn("value '{}' has shape {}, but the model {} {}", s.name, made,
                          s.type.declared ? "declares" : "implies (from a declaration contradicted before it)", typed);
    return Status::ok();
  }
  return Status(StatusCode::kFail, "output '" + s.name + "' has shape " + made + ", but the graph's types say " +
                                       typed + ": the provider's kernel and the op's meaning disagree");
}

Status RunState::set(SlotId slot, RuntimeValue& rv, std::unique_ptr<LOOM_Value> value, const Step* step) {
    if (rv.ready) return invalid_argument("output set twice");
    if (value->kind == LOOM_VALUE_TENSOR) {
      LOOM_RETURN_IF_ERROR(check_static_dtype(slot, value->tensor.dtype));
      LOOM_RETURN_IF_ERROR(check_static_shape(slot, value->tensor.dims, step, rv));
    }
    if (slot != kNoSlot && plan_.slots[slot].memory != 0)
      return not_implemented("values set whole must live in host memory, not '" +
                             plugin_host::memory_name(plan_.memories[plan_.slots[slot].memory].info) + "'");
    rv.v = std::move(*value);
    rv.ready = true;
    return Status::ok();
  }

Expected<ValuePtr> RunState::take_output(SlotId slot) {
    RuntimeValue& rv = values_[slot];
    if (!rv.ready) return fail("output '" + plan_.slots[slot].name + "' was not produced");
    const LOOM_Value& v = *rv.value();
    // Tensors whose storage is a host Tensor are shared; the rest is copied
    // (arena buffers are reused by the next run).
    if (v.kind == LOOM_VALUE_TENSOR && v.owned.dtype() != DType::kUndefined &&
        (v.tensor.strings != nullptr || v.owned.data() == v.tensor.data))
      return plugin_host::tensor_value(v.owned);
    return plugin_host::clone_value(v);
  }

Status RunState::run_copy(const Step& step, StepTiming* timing) {
  if (step.constant_copy && resources_.constants != nullptr) return copy_constant_once(step, timing);
  const LOOM_Value& src = *values_[step.inputs[0]].value();
  if (src.kind != LOOM_VALUE_TENSOR) return not_implemented(step.label + ": only tensors can move between memories");
  RuntimeValue& dst = values_[step.outputs[0]];
  Status why;
  if (!allocate(step.outputs[0], dst, src.tensor.dtype, src.tensor.dims.data(), src.tensor.dims.size(), &why, &step))
    return Status(why.code(), step.label + ": " + why.message());
  const uint64_t bytes = src.tensor.count * dtype_size(static_cast<DType>(src.tensor.dtype));
  if (bytes == 0) return Status::ok();
  const auto start = std::chrono::steady_clock::now();
  Status st = eps_[step.ep]->copy(plugin_host::memory_of(src.tensor), src.tensor.data,
                                  plugin_host::memory_of(dst.v.tensor), dst.v.tensor.data, bytes,
                                  resources_.streams[step.stream]);
  if (timing != nullptr) {
    timing->kernel_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    timing->bytes = bytes;
  }
  return st.with_context(step.label + " (provider '" + eps_[step.ep]->name() + "')");
}

// Records, waits and the barrier: the plan's ordering between streams.
Status RunState::run_sync_step(const Step& step) {
  if (step.kind == StepKind::kBarrier) return synchronize_streams().with_context("waiting for the streams");
  LOOM_Event* e = resources_.events[static_cast<size_t>(step.event)];
  LOOM_Stream* s = resources_.streams[step.stream];
  LOOM_Status* raw = nullptr;
  if (step.kind == StepKind::kRecord) raw = e->record(e->state, s);
  else if (s == nullptr) raw = e->synchronize(e->state);  // the host waits
  else raw = e->wait(e->state, s);
  return plugin_host::from_abi(raw).with_context((step.kind == StepKind::kRecord ? "recording " : "waiting for ") +
                                                 step.label);
}

std::string RunState::describe(const std::vector<SlotId>& slots) const {
  std::string out;
  for (SlotId s : slots) {
    if (!out.empty()) out += "; ";
    const LOOM_Value* v = s == kNoSlot ? nullptr : value_of(s);
    if (v == nullptr || v->kind != LOOM_VALUE_TENSOR) {
      out += v == nullptr ? "-" : v->kind == LOOM_VALUE_SEQUENCE ? "sequence" : "none";
      continue;
    }
    out += dtype_name(static_cast<DType>(v->tensor.dtype)) + dims_string(v->tensor.dims);
  }
  return out;
}

bool RunState::no_output_made(const Step& step) const {
  for (SlotId s : step.outputs)
    if (s != kNoSlot && values_[s].ready) return false;
  return true;
}

// The partition's EP declined these inputs (`declined`): its nodes run on
// the fallback provider instead, fed the step's inputs by position.
Status RunState::run_on_fallback(const Step& step, const Status& declined) {
  const ir::Graph& nodes = step.fallback->graph();
  std::map<std::string, const LOOM_Value*> feeds;
  // A constant the EP packed and released has no bytes left to hand over:
  // zeros of its type and dims stand in, and the results are kept only if
  // every output is empty (holds no value a stand-in could have changed;
  // only weights read by their packing node alone are released, so no
  // shape is computed from one).
  std::vector<std::unique_ptr<LOOM_Value>> stand_ins;
  std::string released;
  for (size_t i = 0; i < step.inputs.size() && i < nodes.inputs.size(); ++i) {
    const LOOM_Value* v = step.inputs[i] == kNoSlot ? nullptr : value_of(step.inputs[i]);
    if (v == nullptr) return declined.with_context("no fallback: input '" + nodes.inputs[i] + "' is not available");
    if (v->kind == LOOM_VALUE_TENSOR && v->tensor.data == nullptr && v->tensor.count > 0) {
      auto zeros = Tensor::zeros(static_cast<DType>(v->tensor.dtype), v->tensor.dims);
      if (!zeros) return declined.with_context("no fallback: " + zeros.status().message());
      stand_ins.push_back(plugin_host::tensor_value(*zeros));
      v = stand_ins.back().get();
      released = nodes.inputs[i];
    }
    feeds[nodes.inputs[i]] = v;
  }
  auto plan = step.fallback->plan();
  if (!plan) return Status(declined.code(), declined.message() + "; no fallback: " + plan.status().message());
  const SubgraphPlan& sub = **plan;
  auto results = execute(*sub.plan, eps_, feeds, sub.plan->outputs, *sub.resources, ExecuteOptions{limits_});
  if (!results)
    return results.status().with_context("running the partition's nodes on the fallback provider after: " +
                                         declined.message());
  if (!released.empty())
    for (const ValuePtr& r : *results)
      if (r->kind != LOOM_VALUE_TENSOR || r->tensor.count > 0)
        return Status(declined.code(), declined.message() + "; no fallback: it makes values from constant '" +
                                           released + "', which the provider packed and released");
  log::logger()->debug("{}: {}; ran its nodes on the fallback provider", step.label, declined.message());
  for (size_t k = 0; k < step.outputs.size() && k < results->size(); ++k)
    if (step.outputs[k] != kNoSlot)
      LOOM_RETURN_IF_ERROR(set(step.outputs[k], values_[step.outputs[k]], std::move((*results)[k]), &step));
  return Status::ok();
}

Status RunState::run_step(const Step& step, StepTiming* timing) {
  if (step.stream != kHostStream) streams_idle_ = false;
  switch (step.kind) {
    case StepKind::kRecord:
    case StepKind::kWait:
    case StepKind::kBarrier:
      return run_sync_step(step);
    default:
      break;
  }
  if (step.kind == StepKind::kCopy && bindings_ != nullptr && !bindings_->skipped_copies.empty()) {
    auto skipped = bindings_->skipped_copies.find(static_cast<size_t>(&step - plan_.steps.data()));
    if (skipped != bindings_->skipped_copies.end()) {
      if (skipped->second != nullptr) {
        RuntimeValue& out = values_[step.outputs[0]];
        out.borrowed = skipped->second;
        out.ready = true;
      }
      return Status::ok();
    }
  }
  for (SlotId s : step.inputs)
    if (s != kNoSlot && !values_[s].ready)
      return fail(step.label + ": input '" + plan_.slots[s].name + "' was not produced");
  if (timing != nullptr) timing->inputs = describe(step.inputs);
  if (step.kind == StepKind::kCopy) {
    LOOM_RETURN_IF_ERROR(run_copy(step, timing));
    if (timing != nullptr) timing->outputs = describe(step.outputs);
    if (!parallel_)
      for (SlotId s : step.frees) drop(values_[s]);
    return Status::ok();
  }
  StepKernelContext ctx(*this, step, timing);
  // EPs that declared they cannot run concurrently run one step at a time
  // (recursive: a control-flow step of such an EP runs its body's steps).
  std::unique_lock<std::recursive_mutex> serial;
  if (std::recursive_mutex* m = eps_[step.ep]->step_mutex()) serial = std::unique_lock<std::recursive_mutex>(*m);
  const auto start = timing != nullptr ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  Status st = step.kind == StepKind::kKernel ? plugin_host::run_kernel(*step.def, step.kernel, &ctx)
                                             : plugin_host::run_partition(*step.partition, &ctx);
  if (!st && st.code() == StatusCode::kNotImplemented && step.fallback != nullptr && ctx.error().empty() &&
      no_output_made(step))
    st = run_on_fallback(step, st);
  if (timing != nullptr) {
    timing->kernel_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    timing->outputs = describe(step.outputs);
  }
  if (!st) {
    std::string msg = st.message();
    if (ctx.error().empty()) return Status(st.code(), step.label + ": " + msg);
    if (msg.find(ctx.error()) == std::string::npos) msg += " (" + ctx.error() + ")";
    return Status(ctx.error_code(), step.label + ": " + msg);
  }
  for (size_t i = 0; i < step.outputs.size(); ++i) {
    const SlotId s = step.outputs[i];
    if (s != kNoSlot && !values_[s].ready && plan_.slots[s].kind == SlotKind::kGraphOutput)
      return fail(step.label + ": did not produce graph output '" + plan_.slots[s].name + "'");
  }
  if (!parallel_)
    for (SlotId s : step.frees) drop(values_[s]);
  return Status::ok();
}


}  // namespace loom::exec
