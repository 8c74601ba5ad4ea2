// Groups supported nodes into large acyclic connected sets to claim as fused
// partitions, so blocked layouts flow between primitives inside a set and
// reorders happen only at its edges.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "node_spec.h"
#include "op_support.h"

namespace loom::onednn {

struct GroupingInput {
  std::vector<NodeSpec> nodes;        // graph order
  std::vector<uint64_t> ids;          // host node ids, parallel to nodes
  std::vector<SupportVerdict> verdicts;
};

// Each result is a list of indices into GroupingInput::nodes.
//
// Acyclicity rule: nodes are visited in topological order; a node may join
// the group G of one of its producers only if G is not reachable from the
// node through a path that leaves G (for each node we track the set of groups
// it depends on through at least one non-member). Groups that do no compute
// (only Reshape/Flatten) are dropped: they would only add copies.
std::vector<std::vector<size_t>> group_supported_nodes(const GroupingInput& input);

}  // namespace loom::onednn
