// The copies pass of build_plan, after binding: binding leaves every step
// reading each value where it was made and records where the step needs it
// (Step::input_memory; subgraph captures and graph outputs are needed in
// host memory). This pass adds a copy step wherever a step needs a value in
// another memory, before that step, reuses it for later readers in the same
// memory, and points the readers at the copy:
//   - a copy is made by an EP whose data transfer says it can (can_copy):
//     the device's owner between host and device; between two devices
//     either owner (the source's first), else the value goes through host
//     memory (two copies);
//   - an initializer no run may override (not a graph input) moving from
//     the host is copied once per session (Step::constant_copy);
//   - string tensors do not move, and a move no owner copies is an error
//     naming the value, both memories and the provider;
//   - graph outputs end in host memory: their copies come last.
#pragma once

#include <functional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "exec/execution_plan.h"

namespace loom::exec {

struct CopyRules {
  // Per memory kind (index into ExecutionPlan::memories): the EP owning it,
  // -1 for the host's.
  std::vector<int> memory_owner;
  // Whether EP `ep`'s data transfer copies from memory `from` to `to`.
  std::function<bool(size_t ep, size_t from, size_t to)> can_copy;
  // The stream EP `ep`'s steps run on (may add it to the plan).
  std::function<size_t(size_t ep)> stream_of;
  std::function<std::string(size_t ep)> ep_name;
  // The slots of the plan's inputs (graph inputs and overridable
  // initializers): never copied once per session.
  std::unordered_set<SlotId> input_slots;
};

// Rewrites plan.steps (copies inserted), the steps' inputs and captures, and
// plan.outputs (each now in host memory). Returns the (step, slot) pairs the
// steps' captures read, for the lifetimes pass.
Expected<std::vector<std::pair<size_t, SlotId>>> insert_copies(ExecutionPlan& plan, const CopyRules& rules);

}  // namespace loom::exec
