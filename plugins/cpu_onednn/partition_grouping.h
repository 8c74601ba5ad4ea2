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
// the group G of one of its producers (the first, in node order, that
// qualifies) only if no path from G to the node leaves G (no other producer
// outside G is reachable from G). Groups that do no compute (only
// Reshape/Flatten) are dropped: they would only add copies. Linear in the
// graph's size: the reachability searches share a budget, past which a node
// starts a group of its own rather than joining one.
std::vector<std::vector<size_t>> group_supported_nodes(const GroupingInput& input);

}  // namespace loom::onednn
