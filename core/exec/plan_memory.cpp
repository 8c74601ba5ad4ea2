#include "exec/plan_memory.h"

#include <algorithm>

#include "exec/plan_synchronization.h"
#include "memory/memory_planner.h"

namespace loom::exec {
namespace {

// The most bytes the static plan sizes in all: more than any host's memory,
// so a plan past it comes from declared shapes no run will make.
constexpr int64_t kMaxPlannedBytes = int64_t{1} << 40;

// Where a kernel allows it (LOOM_KernelDef.inplace_pairs), an output takes
// over the buffer of an input that dies at that step: same memory, same
// bytes, both intermediates the static plan sizes. `buffer` maps each slot
// to the slot whose buffer it uses.
void share_buffers_in_place(const ExecutionPlan& plan, const std::vector<int64_t>& bytes, const std::vector<int>& dies,
                            std::vector<SlotId>& buffer) {
  std::vector<bool> donated(bytes.size(), false);
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step& st = plan.steps[i];
    if (st.kind != StepKind::kKernel || st.def == nullptr ||
        !LOOM_HAS_FIELD(st.def, LOOM_KernelDef, inplace_pair_count) ||
        st.def->inplace_pairs == nullptr)
      continue;
    for (uint64_t k = 0; k < st.def->inplace_pair_count; ++k) {
      const int32_t in = st.def->inplace_pairs[2 * k], out = st.def->inplace_pairs[2 * k + 1];
      if (in < 0 || out < 0 || static_cast<size_t>(in) >= st.inputs.size() ||
          static_cast<size_t>(out) >= st.outputs.size())
        continue;
      const SlotId x = st.inputs[in], o = st.outputs[out];
      if (x == kNoSlot || o == kNoSlot || donated[x] || bytes[x] < 0 || bytes[x] != bytes[o] ||
          dies[x] != static_cast<int>(i) || plan.slots[x].memory != plan.slots[o].memory)
        continue;
      donated[x] = true;
      buffer[o] = buffer[x];
    }
  }
}

}  // namespace

void plan_lifetimes_and_memory(ExecutionPlan& plan, const std::vector<std::pair<size_t, SlotId>>& extra_reads) {
  const size_t ns = plan.slots.size();
  std::vector<int> producer(ns, -1), last_use(ns, -1);
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    for (SlotId s : plan.steps[i].inputs)
      if (s != kNoSlot) last_use[s] = static_cast<int>(i);
    for (SlotId s : plan.steps[i].outputs)
      if (s != kNoSlot) producer[s] = static_cast<int>(i);
  }
  for (auto [step, s] : extra_reads) last_use[s] = std::max(last_use[s], static_cast<int>(step));
  extend_async_reads(plan, last_use);
  for (const Step& st : plan.steps)
    for (SlotId s : st.reads()) ++plan.slots[s].readers;
  // Sizes and lifetimes of the intermediates the static shapes determine.
  std::vector<int64_t> bytes(ns, -1);
  std::vector<int> dies(ns, -1);
  int64_t planned_total = 0;
  for (size_t s = 0; s < ns; ++s) {
    Slot& slot = plan.slots[s];
    if (slot.kind != SlotKind::kIntermediate || producer[s] < 0) continue;
    dies[s] = std::max(producer[s], last_use[s]);
    plan.steps[dies[s]].frees.push_back(static_cast<SlotId>(s));
    slot.produced_at = producer[s];
    slot.dies_at = dies[s];
    if (!slot.type.fully_known() || slot.type.kind != ir::ValueKind::kTensor || dtype_size(slot.type.dtype) == 0)
      continue;
    if (plan.steps[producer[s]].constant_copy) continue;  // kept by the session, not in a run's arena
    // Declared shapes come from the model and may be absurd: a size that
    // overflows, or would take the planned total past kMaxPlannedBytes, is
    // left to run time (sized by the real tensor), which also keeps the
    // memory planner's sums from overflowing.
    auto count = checked_element_count(slot.type.known_dims());
    const auto esize = static_cast<int64_t>(dtype_size(slot.type.dtype));
    const int64_t room = (kMaxPlannedBytes - planned_total) / esize - memory::kBufferAlignment;  // elements
    if (!count || *count > room) continue;
    bytes[s] = *count * esize;
    planned_total += bytes[s] + memory::kBufferAlignment;
  }
  // Each slot's buffer: its own, or the one it takes over in place.
  std::vector<SlotId> buffer(ns);
  for (size_t s = 0; s < ns; ++s) buffer[s] = static_cast<SlotId>(s);
  share_buffers_in_place(plan, bytes, dies, buffer);
  std::vector<int> buffer_end(ns, -1);
  for (size_t s = 0; s < ns; ++s)
    if (bytes[s] >= 0) buffer_end[buffer[s]] = std::max(buffer_end[buffer[s]], dies[s]);
  std::vector<std::vector<memory::BufferRequest>> requests(plan.memories.size());
  std::vector<std::vector<SlotId>> request_slots(plan.memories.size());
  for (size_t s = 0; s < ns; ++s) {
    if (bytes[s] < 0 || buffer[s] != static_cast<SlotId>(s)) continue;
    const size_t m = plan.slots[s].memory;
    requests[m].push_back({bytes[s], producer[s], buffer_end[s]});
    request_slots[m].push_back(static_cast<SlotId>(s));
  }
  for (size_t m = 0; m < plan.memories.size(); ++m) {
    memory::MemoryPlan mp = memory::plan_memory(requests[m]);
    plan.memories[m].arena_bytes = mp.arena_bytes;
    for (size_t i = 0; i < request_slots[m].size(); ++i) {
      Slot& slot = plan.slots[request_slots[m][i]];
      slot.planned_offset = mp.offsets[i];
      slot.planned_bytes = requests[m][i].bytes;
    }
  }
  for (size_t s = 0; s < ns; ++s)
    if (bytes[s] >= 0 && buffer[s] != static_cast<SlotId>(s)) {
      plan.slots[s].planned_offset = plan.slots[buffer[s]].planned_offset;
      plan.slots[s].planned_bytes = bytes[s];
    }
}

}  // namespace loom::exec
