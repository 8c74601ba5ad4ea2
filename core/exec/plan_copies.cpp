#include "exec/plan_copies.h"

#include <map>

#include "plugin_host/abi_objects.h"

namespace loom::exec {
namespace {

class CopyInserter {
 public:
  CopyInserter(ExecutionPlan& plan, const CopyRules& rules) : plan_(plan), rules_(rules) {}

  Expected<std::vector<std::pair<size_t, SlotId>>> run() {
    std::vector<Step> steps = std::move(plan_.steps);
    plan_.steps.clear();
    std::vector<std::pair<size_t, SlotId>> capture_reads;
    for (Step& step : steps) {
      for (size_t k = 0; k < step.inputs.size(); ++k) {
        if (step.inputs[k] == kNoSlot || k >= step.input_memory.size()) continue;
        LOOM_ASSIGN_OR_RETURN(step.inputs[k], in_memory(step.inputs[k], step.input_memory[k]));
      }
      // Bodies run on host-bound slots: device values come to the host first.
      for (auto& [name, slot] : step.captures) {
        LOOM_ASSIGN_OR_RETURN(slot, in_memory(slot, 0));
        capture_reads.emplace_back(plan_.steps.size(), slot);
      }
      plan_.steps.push_back(std::move(step));
    }
    for (SlotId& out : plan_.outputs) {
      LOOM_ASSIGN_OR_RETURN(out, in_memory(out, 0));
    }
    return capture_reads;
  }

 private:
  bool owner_copies(size_t device, size_t from, size_t to) const {
    const int owner = rules_.memory_owner[device];
    return owner >= 0 && rules_.can_copy(static_cast<size_t>(owner), from, to);
  }

  std::string memory_name(size_t m) const { return plugin_host::memory_name(plan_.memories[m].info); }

  // The slot holding `slot`'s value in memory `m`, adding copy steps as needed.
  Expected<SlotId> in_memory(SlotId slot, size_t m) {
    const size_t from = plan_.slots[slot].memory;
    if (from == m) return slot;
    auto key = std::make_pair(slot, m);
    if (auto it = copies_.find(key); it != copies_.end()) return it->second;
    size_t device = from != 0 ? from : m;
    if (from != 0 && m != 0) {
      if (owner_copies(from, from, m)) {
        device = from;
      } else if (owner_copies(m, from, m)) {
        device = m;
      } else {
        LOOM_ASSIGN_OR_RETURN(SlotId via_host, in_memory(slot, 0));
        return in_memory(via_host, m);
      }
    }
    const std::string value = plan_.slots[slot].name;  // a copy: slots grow below
    if (plan_.slots[slot].type.dtype == DType::kString)
      return not_implemented("value '" + value + "' is a string tensor and cannot move to memory '" + memory_name(m) +
                             "'");
    const int owner = rules_.memory_owner[device];
    if (owner < 0 || !owner_copies(device, from, m))
      return not_implemented("value '" + value + "' must move from memory '" + memory_name(from) + "' to '" +
                             memory_name(m) + "', but provider '" +
                             (owner < 0 ? std::string("?") : rules_.ep_name(static_cast<size_t>(owner))) +
                             "' does not copy that way (its data transfer's can_copy says no)");
    Step step;
    step.kind = StepKind::kCopy;
    step.ep = static_cast<size_t>(owner);
    step.stream = rules_.stream_of(step.ep);
    step.inputs = {slot};
    step.input_memory = {from};
    // An initializer that no run may override (not a graph input) is copied
    // once per session rather than every run.
    step.constant_copy =
        plan_.slots[slot].kind == SlotKind::kConstant && from == 0 && !rules_.input_slots.count(slot);
    Slot copy;
    copy.name = value + "@" + memory_name(m);
    copy.kind = SlotKind::kIntermediate;
    copy.memory = m;
    copy.type = plan_.slots[slot].type;
    plan_.slots.push_back(std::move(copy));
    const auto dst = static_cast<SlotId>(plan_.slots.size() - 1);
    step.outputs = {dst};
    step.label = "'" + value + "' from " + memory_name(from) + " to " + memory_name(m);
    step.name = step.label;
    step.op_type = "copy";
    plan_.steps.push_back(std::move(step));
    copies_[key] = dst;
    return dst;
  }

  ExecutionPlan& plan_;
  const CopyRules& rules_;
  std::map<std::pair<SlotId, size_t>, SlotId> copies_;  // (value, memory) -> its copy there
};

}  // namespace

Expected<std::vector<std::pair<size_t, SlotId>>> insert_copies(ExecutionPlan& plan, const CopyRules& rules) {
  return CopyInserter(plan, rules).run();
}

}  // namespace loom::exec
