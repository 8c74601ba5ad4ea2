// The session's constants as runs see them: the host initializers a step
// releases once it has packed them (held by the pool's ConstantStore), and
// the device copies of initializers (made once by the first run, shared by
// every run, freed when their reader packed them and no run uses them any
// more).
#include "exec/run_state.h"

#include <chrono>

namespace loom::exec {

bool RunState::release_constant(SlotId slot) {
  if (slot == kNoSlot) return false;
  const Slot& s = plan_.slots[slot];
  // The session's device copy of an initializer, read by this step alone.
  if (s.kind == SlotKind::kIntermediate && s.readers == 1 && s.produced_at >= 0 &&
      plan_.steps[static_cast<size_t>(s.produced_at)].constant_copy && resources_.constants != nullptr)
    return release_device_constant(slot);
  if (s.kind != SlotKind::kConstant || s.readers != 1) return false;
  for (const auto& [name, in] : plan_.inputs)
    if (in == slot) return false;
  // The store frees the bytes once runs let go of them; the next run
  // binds a value without data.
  if (!resources_.host_constants->release(slot)) return false;
  // This run lets go now (so packing weight after weight never holds them
  // all twice); runs in flight elsewhere let go when they end.
  keep_type_only(values_[slot]);
  return true;
}

// The session's device copy of an initializer (made by the first run,
// synchronously, so that every later run on any stream finds it complete),
// after which the host's copy is released where the copy was its only reader.
Status RunState::copy_constant_once(const Step& step, StepTiming* timing) {
  DeviceConstants& constants = *resources_.constants;
  const SlotId out = step.outputs[0];
  std::lock_guard<std::mutex> lock(constants.mutex);
  auto it = constants.entries.find(out);
  if (it == constants.entries.end()) {
    if (auto released = resources_.host_constants->released(out)) {
      // Its reader keeps its own packed copy: dtype and dims only.
      RuntimeValue& dst = values_[out];
      dst.v = std::move(*plugin_host::tensor_view_value(released->first, released->second, nullptr,
                                                        &plan_.memories[plan_.slots[out].memory].info));
      dst.ready = true;
      return Status::ok();
    }
    const LOOM_Value& src = *values_[step.inputs[0]].value();
    if (src.kind != LOOM_VALUE_TENSOR || (src.tensor.data == nullptr && src.tensor.count > 0))
      return not_implemented(step.label + ": the initializer's data is not available on the host");
    const size_t m = plan_.slots[out].memory;
    const uint64_t bytes = src.tensor.count * dtype_size(static_cast<DType>(src.tensor.dtype));
    DeviceConstants::Entry e;
    e.arena = resources_.arenas[m];
    auto block = e.arena->allocate(static_cast<int64_t>(bytes));
    if (!block) return block.status().with_context(step.label);
    e.data = *block;
    if (bytes > 0) {
      const auto start = std::chrono::steady_clock::now();
      // No stream: complete when the call returns.
      Status st = eps_[step.ep]->copy(plugin_host::memory_of(src.tensor), src.tensor.data, plan_.memories[m].info, e.data, bytes,
                                      nullptr);
      if (!st) {
        e.arena->free(e.data);
        return st.with_context(step.label + " (provider '" + eps_[step.ep]->name() + "')");
      }
      if (timing != nullptr) {
        timing->kernel_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
        timing->bytes = bytes;
      }
    }
    e.value = plugin_host::tensor_view_value(static_cast<DType>(src.tensor.dtype), src.tensor.dims, e.data,
                                             &plan_.memories[m].info);
    it = constants.entries.emplace(out, std::move(e)).first;
    // The device holds the session's copy now; the host's bytes go when
    // nothing else reads them (no second device, no host kernel, no
    // overriding input), so a device EP's weights are not kept twice.
    release_constant(step.inputs[0]);
  }
  ++it->second.users;
  constants_used_.push_back(out);
  RuntimeValue& dst = values_[out];
  dst.borrowed = it->second.value.get();
  dst.ready = true;
  return Status::ok();
}

bool RunState::release_device_constant(SlotId slot) {
  DeviceConstants& constants = *resources_.constants;
  {
    std::lock_guard<std::mutex> lock(constants.mutex);
    auto it = constants.entries.find(slot);
    if (it == constants.entries.end() || it->second.released) return false;
    it->second.released = true;
    const LOOM_Tensor& t = it->second.value->tensor;
    resources_.host_constants->mark_released(slot, static_cast<DType>(t.dtype), t.dims);
  }
  // This run lets go now; the bytes go when the last run using them ends.
  keep_type_only(values_[slot]);
  return true;
}

void RunState::keep_type_only(RuntimeValue& rv) {
  const LOOM_Value& bound = *rv.value();
  rv.v = std::move(*plugin_host::tensor_view_value(static_cast<DType>(bound.tensor.dtype), bound.tensor.dims, nullptr,
                                                   bound.tensor.memory));
  rv.borrowed = nullptr;
  rv.shared.reset();
}

void RunState::let_go_of_constants() {
  if (constants_used_.empty()) return;
  DeviceConstants& constants = *resources_.constants;
  std::lock_guard<std::mutex> lock(constants.mutex);
  for (SlotId slot : constants_used_) {
    auto it = constants.entries.find(slot);
    if (it == constants.entries.end()) continue;
    if (--it->second.users == 0 && it->second.released) {
      if (it->second.data != nullptr) it->second.arena->free(it->second.data);
      constants.entries.erase(it);
    }
  }
  constants_used_.clear();
}

}  // namespace loom::exec
