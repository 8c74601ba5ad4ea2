#include "exec/capture_layout.h"

#include <algorithm>
#include <string>

namespace loom::exec {
namespace {

bool is_launch(const Step& s) { return s.kind == StepKind::kKernel || s.kind == StepKind::kPartition; }

bool overlaps(const Slot& a, const Slot& b) {
  if (a.planned_offset < 0 || b.planned_offset < 0 || a.memory != b.memory) return false;
  return a.planned_offset < b.planned_offset + b.planned_bytes && b.planned_offset < a.planned_offset + a.planned_bytes;
}

// Why region step `s` cannot be recorded, or "".
std::string launch_problem(const ExecutionPlan& plan, const Step& s, size_t stream) {
  if (s.stream != stream) return s.label + " runs on the host";
  if (!s.subgraphs.empty()) return s.label + " runs subgraphs (control flow)";
  for (size_t i = 0; i < s.input_on_host.size() && i < s.inputs.size(); ++i)
    if (s.input_on_host[i] && s.inputs[i] != kNoSlot && plan.slots[s.inputs[i]].kind != SlotKind::kConstant)
      return s.label + " reads '" + plan.slots[s.inputs[i]].name + "' on the host, which the run computes";
  for (bool on_host : s.output_on_host)
    if (on_host) return s.label + " writes an output on the host";
  for (SlotId t : s.outputs)
    if (t != kNoSlot && plan.slots[t].kind == SlotKind::kGraphOutput)
      return s.label + " writes graph output '" + plan.slots[t].name + "' in place";
  return "";
}

// A layout that says why the plan cannot be recorded.
CaptureLayout refused(std::string why) {
  CaptureLayout out;
  out.why_not = std::move(why);
  return out;
}

}  // namespace

CaptureLayout capture_layout(const ExecutionPlan& plan, const std::vector<plugin_host::EpInstance*>& eps) {
  CaptureLayout out;
  if (plan.streams.size() != 2)
    return refused("the plan needs exactly one asynchronous provider's stream, it has " +
                std::to_string(plan.streams.size() - 1));
  out.stream = 1;
  const int ep = plan.streams[1].ep;
  if (ep < 0 || static_cast<size_t>(ep) >= eps.size() || !eps[static_cast<size_t>(ep)]->captures_runs())
    return refused("provider '" + plan.streams[1].name + "' does not record runs");
  out.ep = static_cast<size_t>(ep);
  std::vector<size_t> input_copies, output_copies;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step& s = plan.steps[i];
    if (is_launch(s)) {
      if (std::string why = launch_problem(plan, s, out.stream); !why.empty()) return refused(why);
      out.region.push_back(i);
    } else if (s.kind == StepKind::kCopy) {
      const SlotKind from = plan.slots[s.inputs.at(0)].kind, to = plan.slots[s.outputs.at(0)].kind;
      if (s.constant_copy || from == SlotKind::kGraphInput) input_copies.push_back(i);
      else if (to == SlotKind::kGraphOutput) output_copies.push_back(i);
      else return refused(s.label + " copies a value the run computes between memories");
    } else if (out.region.empty()) {
      out.prefix.push_back(i);  // event steps before any launch
    } else {
      out.suffix.push_back(i);
    }
  }
  if (out.region.empty()) return refused("no step runs on provider '" + plan.streams[1].name + "'");
  // An input copy moves before every launch: none before it may use its memory.
  for (size_t c : input_copies) {
    const Slot& dst = plan.slots[plan.steps[c].outputs.at(0)];
    for (size_t r : out.region) {
      if (r > c) break;
      const Step& s = plan.steps[r];
      for (const std::vector<SlotId>* slots : {&s.inputs, &s.outputs})
        for (SlotId t : *slots)
          if (t != kNoSlot && overlaps(plan.slots[t], dst))
            return refused(plan.steps[c].label + " shares memory with '" + plan.slots[t].name + "', used before it");
    }
  }
  // An output copy moves after every launch: none after it may overwrite its source.
  for (size_t c : output_copies) {
    const Slot& src = plan.slots[plan.steps[c].inputs.at(0)];
    for (size_t r : out.region) {
      if (r < c) continue;
      for (SlotId t : plan.steps[r].outputs)
        if (t != kNoSlot && overlaps(plan.slots[t], src))
          return refused(plan.steps[c].label + " reads memory that '" + plan.slots[t].name + "' takes over after it");
    }
  }
  out.prefix.insert(out.prefix.end(), input_copies.begin(), input_copies.end());
  std::sort(out.prefix.begin(), out.prefix.end());
  out.suffix.insert(out.suffix.end(), output_copies.begin(), output_copies.end());
  std::sort(out.suffix.begin(), out.suffix.end());
  return out;
}

}  // namespace loom::exec
