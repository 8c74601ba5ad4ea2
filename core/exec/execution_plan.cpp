#include "exec/execution_plan.h"

#include <algorithm>

#include "plugin_host/abi_objects.h"

namespace loom::exec {

std::vector<SlotId> Step::reads() const {
  std::vector<SlotId> read;
  for (SlotId s : inputs)
    if (s != kNoSlot) read.push_back(s);
  for (const auto& [name, s] : captures) read.push_back(s);
  std::sort(read.begin(), read.end());
  read.erase(std::unique(read.begin(), read.end()), read.end());
  return read;
}

bool Step::reads_at_launch(SlotId slot, size_t slot_memory) const {
  if (kind == StepKind::kCopy) return slot_memory == 0;
  for (size_t i = 0; i < input_on_host.size() && i < inputs.size(); ++i)
    if (input_on_host[i] && inputs[i] == slot) return true;
  return false;
}

bool Step::writes_at_launch(SlotId slot) const {
  for (size_t i = 0; i < output_on_host.size() && i < outputs.size(); ++i)
    if (output_on_host[i] && outputs[i] == slot) return true;
  return false;
}

ExecutionPlan::~ExecutionPlan() {
  for (auto& [def, kernel] : created_kernels) def->release(kernel);
  for (Step& s : steps)
    if (s.partition != nullptr) s.partition->release(s.partition);
}

int64_t ExecutionPlan::planned_peak_bytes() const {
  int64_t total = 0;
  for (const MemoryKind& m : memories) total += m.arena_bytes;
  return total;
}

std::string ExecutionPlan::to_string() const {
  auto slot_name = [&](SlotId s) { return s == kNoSlot ? std::string("-") : slots[s].name; };
  std::string out;
  if (streams.size() > 1) {
    out += "streams:";
    for (size_t i = 0; i < streams.size(); ++i)
      out += " [" + std::to_string(i) + "] " + streams[i].name + (i == kHostStream ? " (synchronous)" : " (asynchronous)");
    out += "\n";
  }
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& st = steps[i];
    out += std::to_string(i) + ": ";
    if (streams.size() > 1) out += "[" + std::to_string(st.stream) + "] ";
    switch (st.kind) {
      case StepKind::kRecord: out += "record " + st.label + "\n"; continue;
      case StepKind::kWait: out += (st.stream == kHostStream ? "host waits for " : "wait for ") + st.label + "\n"; continue;
      case StepKind::kBarrier: out += "barrier: " + st.label + "\n"; continue;
      case StepKind::kCopy: out += "copy "; break;
      case StepKind::kPartition: out += "launch partition "; break;
      case StepKind::kKernel: out += "launch kernel "; break;
    }
    out += st.label + " (";
    for (size_t k = 0; k < st.inputs.size(); ++k) out += (k ? ", " : "") + slot_name(st.inputs[k]);
    out += ") -> (";
    for (size_t k = 0; k < st.outputs.size(); ++k) out += (k ? ", " : "") + slot_name(st.outputs[k]);
    out += ")\n";
  }
  for (size_t m = 0; m < memories.size(); ++m) {
    out += "memory " + plugin_host::memory_name(memories[m].info) + ": planned arena " +
           std::to_string(memories[m].arena_bytes) + " bytes\n";
    int sized_at_run_time = 0;
    for (const Slot& slot : slots) {
      if (slot.memory != m || slot.kind != SlotKind::kIntermediate) continue;
      if (slot.planned_offset < 0) {
        ++sized_at_run_time;
        continue;
      }
      out += "  " + slot.name + ": offset " + std::to_string(slot.planned_offset) + ", " +
             std::to_string(slot.planned_bytes) + " bytes, steps " + std::to_string(slot.produced_at) + "-" +
             std::to_string(slot.dies_at) + "\n";
    }
    if (sized_at_run_time > 0)
      out += "  " + std::to_string(sized_at_run_time) + " value(s) sized at run time (memory pattern per input shapes)\n";
  }
  return out;
}

}  // namespace loom::exec
