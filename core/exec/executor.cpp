#include "exec/executor.h"

#include <cstdlib>
#include <cstring>

#include "memory/memory_planner.h"
#include "plugin_host/abi_objects.h"

namespace loom::exec {
namespace {

void* host_alloc(int64_t bytes) {
  const size_t a = static_cast<size_t>(memory::kBufferAlignment);
  return std::aligned_alloc(a, (static_cast<size_t>(bytes) + a - 1) / a * a);
}

// The value of one slot during a run.
struct RuntimeValue {
  LOOM_Tensor view;
  bool ready = false;
  Tensor owned;                               // host storage owned by this run (or shared input)
  void* device = nullptr;                     // device storage from an allocator
  const LOOM_Allocator* allocator = nullptr;  // frees `device`

  void reset() {
    if (device != nullptr) allocator->free(allocator->state, device);
    device = nullptr;
    owned = Tensor();
    view = LOOM_Tensor{};
    ready = false;
  }
};

class RunState {
 public:
  RunState(const ExecutionPlan& plan, const std::vector<plugin_host::EpInstance*>& eps, ArenaPool::Arenas& arenas)
      : plan_(plan), eps_(eps), arenas_(arenas), values_(plan.slots.size()) {}
  ~RunState() {
    for (RuntimeValue& v : values_) v.reset();
  }

  Status bind(const std::map<std::string, Tensor>& inputs) {
    for (size_t s = 0; s < plan_.slots.size(); ++s)
      if (plan_.slots[s].kind == SlotKind::kConstant) set_shared(static_cast<SlotId>(s), *plan_.slots[s].constant);
    for (const auto& [name, slot] : plan_.inputs) {
      auto it = inputs.find(name);
      if (it != inputs.end()) set_shared(slot, it->second);
    }
    return Status::ok();
  }

  // Allocates `slot` with dtype and dims; NULL plus a reason on failure.
  LOOM_Tensor* allocate(SlotId slot, RuntimeValue& v, int32_t dtype, const int64_t* dims, uint64_t rank,
                        std::string* why) {
    if (v.ready) {
      *why = "output allocated twice";
      return nullptr;
    }
    const Slot* s = slot == kNoSlot ? nullptr : &plan_.slots[slot];
    if (dtype == LOOM_DTYPE_UNDEFINED && s != nullptr) dtype = static_cast<int32_t>(s->type.dtype);
    if (dtype == LOOM_DTYPE_UNDEFINED) {
      *why = "element type unknown (the kernel must name it)";
      return nullptr;
    }
    Dims d(dims, dims + rank);
    auto count = checked_element_count(d);
    if (!count) {
      *why = count.status().message();
      return nullptr;
    }
    const DType t = static_cast<DType>(dtype);
    const size_t memory = s ? s->memory : 0;
    v.view.dtype = dtype;
    v.view.dims = d;
    v.view.count = static_cast<uint64_t>(*count);
    v.view.memory = &plan_.memories[memory].info;
    if (t == DType::kString) {
      v.owned = Tensor::from_strings(d, std::vector<std::string>(static_cast<size_t>(*count)));
      v.view.strings = &v.owned.mutable_strings();
    } else {
      const size_t esize = dtype_size(t);
      if (esize == 0) {
        *why = "unsupported element type " + dtype_name(t);
        return nullptr;
      }
      const int64_t bytes = *count * static_cast<int64_t>(esize);
      if (s && s->kind == SlotKind::kIntermediate && s->planned_offset >= 0 && bytes <= s->planned_bytes &&
          arenas_[memory] != nullptr) {
        v.view.data = static_cast<char*>(arenas_[memory]) + s->planned_offset;
      } else if (memory == 0) {
        auto tensor = Tensor::zeros(t, d);
        if (!tensor) {
          *why = tensor.status().message();
          return nullptr;
        }
        v.owned = std::move(*tensor);
        v.view.data = v.owned.mutable_data();
      } else {
        const LOOM_Allocator* a = plan_.memories[memory].allocator;
        v.device = bytes ? a->alloc(a->state, static_cast<uint64_t>(bytes), memory::kBufferAlignment) : nullptr;
        if (bytes && v.device == nullptr) {
          *why = "allocator of " + plugin_host::memory_name(plan_.memories[memory].info) + " failed for " +
                 std::to_string(bytes) + " bytes";
          return nullptr;
        }
        v.allocator = a;
        v.view.data = v.device;
      }
    }
    v.ready = true;
    return &v.view;
  }

  Status run_step(const Step& step);

  Expected<Tensor> take_output(SlotId slot) {
    RuntimeValue& v = values_[slot];
    if (!v.ready) return fail("graph output '" + plan_.slots[slot].name + "' was not produced");
    if (v.owned.dtype() != DType::kUndefined) return v.owned;
    // A planned buffer (cannot happen for graph outputs, kept for safety): copy out.
    return Tensor::from_bytes(static_cast<DType>(v.view.dtype), v.view.dims, v.view.data,
                              v.view.count * dtype_size(static_cast<DType>(v.view.dtype)));
  }

  std::vector<RuntimeValue>& values() { return values_; }

 private:
  void set_shared(SlotId slot, const Tensor& t) {
    RuntimeValue& v = values_[slot];
    v.owned = t;  // shares storage; kernels only read inputs
    v.view = *plugin_host::view_of(v.owned);
    v.ready = true;
  }

  const ExecutionPlan& plan_;
  const std::vector<plugin_host::EpInstance*>& eps_;
  ArenaPool::Arenas& arenas_;
  std::vector<RuntimeValue> values_;
};

class KernelContext final : public LOOM_KernelContext {
 public:
  KernelContext(RunState& run, const Step& step) : run_(run), step_(step), scratch_(step.outputs.size()) {}

  uint64_t input_count() const override { return step_.inputs.size(); }
  const LOOM_Tensor* input(uint64_t i) const override {
    if (i >= step_.inputs.size() || step_.inputs[i] == kNoSlot) return nullptr;
    return &run_.values()[step_.inputs[i]].view;
  }
  uint64_t output_count() const override { return step_.outputs.size(); }
  LOOM_Tensor* output(uint64_t i, int32_t dtype, const int64_t* dims, uint64_t rank) override {
    if (i >= step_.outputs.size()) {
      error_ = "output index " + std::to_string(i) + " out of range";
      return nullptr;
    }
    const SlotId s = step_.outputs[i];
    // Unnamed outputs still get storage so kernels need not special-case them.
    RuntimeValue& v = s == kNoSlot ? scratch_[i] : run_.values()[s];
    return run_.allocate(s, v, dtype, dims, rank, &error_);
  }
  const LOOM_NodeView* node() const override { return step_.node_view; }
  const std::string& error() const { return error_; }

 private:
  RunState& run_;
  const Step& step_;
  std::vector<RuntimeValue> scratch_;
  std::string error_;
};

Status RunState::run_step(const Step& step) {
  for (SlotId s : step.inputs)
    if (s != kNoSlot && !values_[s].ready)
      return fail(step.label + ": input '" + plan_.slots[s].name + "' was not produced");
  if (step.kind == StepKind::kCopy) {
    const RuntimeValue& src = values_[step.inputs[0]];
    RuntimeValue& dst = values_[step.outputs[0]];
    std::string why;
    if (!allocate(step.outputs[0], dst, src.view.dtype, src.view.dims.data(), src.view.dims.size(), &why))
      return fail(step.label + ": " + why);
    const uint64_t bytes = src.view.count * dtype_size(static_cast<DType>(src.view.dtype));
    if (bytes == 0) return Status::ok();
    const LOOM_DataTransfer* t = eps_[step.ep]->data_transfer();
    LOOM_DataTransfer_Copy_Args args{};
    args.struct_size = LOOM_DataTransfer_Copy_Args_STRUCT_SIZE;
    args.src_memory = src.view.memory;
    args.src = src.view.data;
    args.dst_memory = dst.view.memory;
    args.dst = dst.view.data;
    args.bytes = bytes;
    Status st = plugin_host::from_abi(t->copy(t->state, &args));
    return st.with_context(step.label + " (provider '" + eps_[step.ep]->name() + "')");
  }
  KernelContext ctx(*this, step);
  LOOM_Status* raw = nullptr;
  if (step.kind == StepKind::kKernel) {
    raw = step.def->compute(step.kernel, &ctx);
  } else {
    LOOM_CompiledPartition* p = step.partition;
    void* state = nullptr;
    if (p->create_state) {
      LOOM_CompiledPartition_CreateState_Args a{};
      a.struct_size = LOOM_CompiledPartition_CreateState_Args_STRUCT_SIZE;
      Status st = plugin_host::from_abi(p->create_state(p->state, &a));
      if (!st) return st.with_context(step.label + ": create_state");
      state = a.run_state;
    }
    raw = p->compute(p->state, state, &ctx);
    if (p->release_state) p->release_state(p->state, state);
  }
  Status st = plugin_host::from_abi(raw);
  if (!st) {
    std::string msg = st.message();
    if (!ctx.error().empty() && msg.find(ctx.error()) == std::string::npos) msg += " (" + ctx.error() + ")";
    return Status(st.code(), step.label + ": " + msg);
  }
  for (size_t i = 0; i < step.outputs.size(); ++i) {
    const SlotId s = step.outputs[i];
    if (s != kNoSlot && !values_[s].ready && plan_.slots[s].kind == SlotKind::kGraphOutput)
      return fail(step.label + ": did not produce graph output '" + plan_.slots[s].name + "'");
  }
  for (SlotId s : step.frees) values_[s].reset();
  return Status::ok();
}

}  // namespace

ArenaPool::~ArenaPool() {
  for (auto& a : free_) free_arenas(*a);
}

void ArenaPool::free_arenas(Arenas& a) {
  for (size_t m = 0; m < a.size(); ++m) {
    if (a[m] == nullptr) continue;
    if (m == 0) std::free(a[m]);
    else plan_.memories[m].allocator->free(plan_.memories[m].allocator->state, a[m]);
  }
}

Expected<std::unique_ptr<ArenaPool::Arenas>> ArenaPool::acquire() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!free_.empty()) {
      auto a = std::move(free_.back());
      free_.pop_back();
      return a;
    }
  }
  auto a = std::make_unique<Arenas>(plan_.memories.size(), nullptr);
  for (size_t m = 0; m < plan_.memories.size(); ++m) {
    const int64_t bytes = plan_.memories[m].arena_bytes;
    if (bytes == 0) continue;
    if (m == 0) {
      (*a)[m] = host_alloc(bytes);
    } else {
      const LOOM_Allocator* al = plan_.memories[m].allocator;
      (*a)[m] = al->alloc(al->state, static_cast<uint64_t>(bytes), memory::kBufferAlignment);
    }
    if ((*a)[m] == nullptr) {
      free_arenas(*a);
      return Status(StatusCode::kOutOfMemory, "cannot allocate the " + std::to_string(bytes) + "-byte arena for " +
                                                  plugin_host::memory_name(plan_.memories[m].info));
    }
  }
  return a;
}

void ArenaPool::release(std::unique_ptr<Arenas> arenas) {
  std::lock_guard<std::mutex> lock(mutex_);
  free_.push_back(std::move(arenas));
}

Expected<std::vector<Tensor>> execute(const ExecutionPlan& plan, const std::vector<plugin_host::EpInstance*>& eps,
                                      const std::map<std::string, Tensor>& inputs, const std::vector<SlotId>& outputs,
                                      ArenaPool& pool) {
  LOOM_ASSIGN_OR_RETURN(std::unique_ptr<ArenaPool::Arenas> arenas, pool.acquire());
  std::vector<Tensor> result;
  Status status;
  {
    RunState run(plan, eps, *arenas);
    status = run.bind(inputs);
    for (size_t i = 0; status.is_ok() && i < plan.steps.size(); ++i) status = run.run_step(plan.steps[i]);
    for (size_t i = 0; status.is_ok() && i < outputs.size(); ++i) {
      auto t = run.take_output(outputs[i]);
      if (!t) status = t.status();
      else result.push_back(std::move(*t));
    }
  }
  pool.release(std::move(arenas));
  if (!status) return status;
  return result;
}

}  // namespace loom::exec
