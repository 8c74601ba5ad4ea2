// Session::run on an IoBinding, and the device buffers and copies it needs.
#include <cstdlib>

#include "plugin_host/abi_objects.h"
#include "session/session_impl.h"

namespace loom {

Expected<const LOOM_MemoryInfo*> Session::Impl::memory_info(const std::string& memory) const {
  if (memory == plugin_host::memory_name(plugin_host::host_memory())) return &plugin_host::host_memory();
  std::string known = "cpu";
  for (const plugin_host::EpInstance* ep : eps) {
    const std::string name = plugin_host::memory_name(ep->memory());
    if (name == memory) return &ep->memory();
    // Each kind once (several host EPs share "cpu").
    if ((", " + known + ", ").find(", " + name + ", ") == std::string::npos) known += ", " + name;
  }
  return invalid_argument(model_name + ": no provider of this session uses memory '" + memory + "' (memory kinds: " +
                          known + ")");
}

Expected<std::shared_ptr<DeviceBuffer>> Session::Impl::allocate(const std::string& memory, DType dtype,
                                                               const Dims& dims) const {
  LOOM_ASSIGN_OR_RETURN(const LOOM_MemoryInfo* info, memory_info(memory));
  DeviceTensor t{dtype, dims, nullptr, memory};
  const int64_t bytes = t.byte_size();
  if (bytes < 0 || dtype_size(dtype) == 0)
    return invalid_argument(model_name + ": cannot allocate " + dtype_name(dtype) + " " + dims_string(dims) +
                            " in '" + memory + "'");
  const uint64_t size = static_cast<uint64_t>(bytes > 0 ? bytes : 1);
  const LOOM_Allocator* allocator = nullptr;
  for (const plugin_host::EpInstance* ep : eps)
    if (ep->allocator() != nullptr && plugin_host::same_memory(ep->memory(), *info)) allocator = ep->allocator();
  std::function<void(void*)> free;
  if (allocator == nullptr) {
    t.data = std::aligned_alloc(64, (size + 63) / 64 * 64);
    free = [](void* p) { std::free(p); };
  } else {
    t.data = allocator->alloc(allocator->state, size, 64);
    free = [allocator](void* p) { allocator->free(allocator->state, p); };
  }
  if (t.data == nullptr)
    return Status(StatusCode::kOutOfMemory,
                  model_name + ": cannot allocate " + std::to_string(bytes) + " bytes in '" + memory + "'");
  return std::make_shared<DeviceBuffer>(std::move(t), std::move(free));
}

Status Session::Impl::copy(const DeviceTensor& src, const DeviceTensor& dst) const {
  if (src.dtype != dst.dtype || src.dims != dst.dims)
    return invalid_argument(model_name + ": cannot copy " + dtype_name(src.dtype) + " " + dims_string(src.dims) +
                            " into " + dtype_name(dst.dtype) + " " + dims_string(dst.dims));
  LOOM_ASSIGN_OR_RETURN(const LOOM_MemoryInfo* from, memory_info(src.memory));
  LOOM_ASSIGN_OR_RETURN(const LOOM_MemoryInfo* to, memory_info(dst.memory));
  const int64_t bytes = src.byte_size();
  if (bytes <= 0) return Status::ok();
  if (from == to && plugin_host::same_memory(*from, plugin_host::host_memory())) {
    std::memcpy(dst.data, src.data, static_cast<size_t>(bytes));
    return Status::ok();
  }
  for (const plugin_host::EpInstance* ep : eps) {
    if (!ep->can_copy(*from, *to)) continue;
    return ep->copy(*from, src.data, *to, dst.data, static_cast<uint64_t>(bytes), nullptr)
        .with_context(model_name + ": copy from '" + src.memory + "' to '" + dst.memory + "'");
  }
  return not_implemented(model_name + ": no provider copies from '" + src.memory + "' to '" + dst.memory + "'");
}

Expected<std::shared_ptr<DeviceBuffer>> Session::allocate(const std::string& memory, DType dtype,
                                                         const Dims& dims) const {
  return impl_->allocate(memory, dtype, dims);
}

Expected<Tensor> Session::copy_to_host(const DeviceTensor& src) const {
  LOOM_ASSIGN_OR_RETURN(Tensor t, Tensor::zeros(src.dtype, src.dims));
  LOOM_RETURN_IF_ERROR(impl_->copy(src, DeviceTensor{t.dtype(), t.dims(), t.mutable_data(), "cpu"}));
  return t;
}

Status Session::copy_from_host(const Tensor& src, const DeviceTensor& dst) const {
  return impl_->copy(DeviceTensor{src.dtype(), src.dims(), const_cast<void*>(src.data()), "cpu"}, dst);
}

Status Session::run(IoBinding& binding, const RunOptions& run_options) const {
  const Impl& s = *impl_;
  exec::ExecuteOptions options;
  Impl::RunSpan run_span(s, run_options, options);
  const exec::ExecutionPlan& plan = *s.plan;
  const std::string context = run_options.tag.empty() ? s.model_name : s.model_name + ": [" + run_options.tag + "]";
  auto step_of = [&](exec::SlotId slot, exec::StepKind kind) -> int {
    for (size_t i = 0; i < plan.steps.size(); ++i)
      if (plan.steps[i].kind == kind)
        for (exec::SlotId o : plan.steps[i].outputs)
          if (o == slot) return static_cast<int>(i);
    return -1;
  };
  exec::RunBindings bound;
  std::vector<std::unique_ptr<LOOM_Value>> owned;
  std::vector<Tensor> staged;  // host copies of device inputs that host steps read
  std::map<std::string, const LOOM_Value*> feeds;
  for (const IoBinding::Input& in : binding.inputs()) {
    auto slot_it = std::find_if(plan.inputs.begin(), plan.inputs.end(), [&](const auto& p) { return p.first == in.name; });
    if (slot_it == plan.inputs.end()) return invalid_argument(context + ": unknown input '" + in.name + "'");
    if (in.is_host) {
      LOOM_RETURN_IF_ERROR(s.check_tensor_input(in.name, in.host.dtype(), in.host.dims()));
      LOOM_RETURN_IF_ERROR(check_bool_values(in.host).with_context(context + ": input '" + in.name + "'"));
      owned.push_back(plugin_host::from_public(Value(in.host)));
      feeds[in.name] = owned.back().get();
      continue;
    }
    LOOM_ASSIGN_OR_RETURN(const LOOM_MemoryInfo* memory, s.memory_info(in.device.memory));
    LOOM_RETURN_IF_ERROR(s.check_tensor_input(in.name, in.device.dtype, in.device.dims));
    owned.push_back(plugin_host::tensor_view_value(in.device.dtype, in.device.dims, in.device.data, memory));
    const LOOM_Value* device_view = owned.back().get();
    // Bool bytes are checked wherever the host can read them: in host
    // memory and in the host copy staged for host readers. Kernels of a
    // device reading its own memory are the device's to guard.
    if (plugin_host::same_memory(*memory, plugin_host::host_memory())) {
      LOOM_RETURN_IF_ERROR(check_bool_values(in.device.dtype, in.device.data, in.device.byte_size())
                               .with_context(context + ": input '" + in.name + "'"));
      feeds[in.name] = device_view;
    } else {
      // Copies into this memory read the caller's buffer in place; any other
      // reader gets a host copy made now.
      bool host_readers = false;
      for (size_t i = 0; i < plan.steps.size(); ++i) {
        const exec::Step& st = plan.steps[i];
        const std::vector<exec::SlotId> read = st.reads();
        if (std::find(read.begin(), read.end(), slot_it->second) == read.end()) continue;
        if (st.kind == exec::StepKind::kCopy &&
            plugin_host::same_memory(plan.memories[plan.slots[st.outputs[0]].memory].info, *memory))
          bound.skipped_copies[i] = device_view;
        else
          host_readers = true;
      }
      if (host_readers) {
        LOOM_ASSIGN_OR_RETURN(Tensor host, copy_to_host(in.device));
        LOOM_RETURN_IF_ERROR(check_bool_values(host).with_context(context + ": input '" + in.name + "'"));
        staged.push_back(host);
        owned.push_back(plugin_host::from_public(Value(host)));
        feeds[in.name] = owned.back().get();
      }
    }
  }
  for (IoBinding::Output& out : binding.outputs()) {
    auto it = std::find(plan.output_names.begin(), plan.output_names.end(), out.name);
    if (it == plan.output_names.end()) return invalid_argument(context + ": unknown output '" + out.name + "'");
    exec::SlotId slot = plan.outputs[it - plan.output_names.begin()];
    LOOM_ASSIGN_OR_RETURN(const LOOM_MemoryInfo* memory, s.memory_info(out.target.memory));
    if (!plugin_host::same_memory(plan.memories[plan.slots[slot].memory].info, *memory)) {
      // Made on a device and copied to the host: keep it where it is made.
      const int copy = step_of(slot, exec::StepKind::kCopy);
      const exec::SlotId made = copy >= 0 ? plan.steps[copy].inputs[0] : exec::kNoSlot;
      if (made == exec::kNoSlot || !plugin_host::same_memory(plan.memories[plan.slots[made].memory].info, *memory))
        return invalid_argument(context + ": output '" + out.name + "' is made in '" +
                                plugin_host::memory_name(plan.memories[plan.slots[made == exec::kNoSlot ? slot : made].memory].info) +
                                "' memory, not '" + out.target.memory + "'; bind it to that memory or to 'cpu'");
      if (plan.slots[slot].readers == 0) bound.skipped_copies[static_cast<size_t>(copy)] = nullptr;
      slot = made;
    }
    exec::RunBindings::Output& o = bound.outputs[slot];
    o.name = out.name;
    out.result.reset();
    if (out.preallocated) {
      o.dtype = out.target.dtype;
      o.dims = out.target.dims;
      o.data = out.target.data;
    } else {
      IoBinding::Output* target = &out;
      const Impl* impl = &s;
      o.allocate = [target, impl](DType dtype, const Dims& dims) -> Expected<void*> {
        LOOM_ASSIGN_OR_RETURN(target->result, impl->allocate(target->target.memory, dtype, dims));
        return target->result->tensor().data;
      };
    }
  }
  for (const std::string& r : s.required_inputs)
    if (std::none_of(binding.inputs().begin(), binding.inputs().end(),
                     [&](const IoBinding::Input& in) { return in.name == r; }))
      return invalid_argument(context + ": missing input '" + r + "'");
  LOOM_ASSIGN_OR_RETURN(std::optional<log::RunLogContext> run_log, s.run_log(run_options));
  options.log = run_log ? &*run_log : nullptr;
  options.limits = s.run_limits(run_options);
  options.inter_op = s.inter_op.get();
  LOOM_ASSIGN_OR_RETURN(std::unique_ptr<exec::ValueObserver> observer, s.value_observer(run_options));
  options.observer = observer.get();
  options.bindings = &bound;
  auto result = exec::execute(plan, s.eps, feeds, {}, *s.resources, options);
  if (!result) return result.status().with_context(context);
  return Status::ok();
}

}  // namespace loom
