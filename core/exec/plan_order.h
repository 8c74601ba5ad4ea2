// The first pass of build_plan: the order its partitions (the
// partitioner's groups) run in, and the facts about the graph that the
// later passes ask for while binding values.
//   - Groups run in a topological order of the dependencies between them;
//     among those ready, the one whose first node comes earliest in the
//     graph's own topological order goes first (plans follow the model's
//     order where they can).
//   - Groups that depend on each other in a cycle (a claim the partitioner
//     should have split) fail with InvalidGraph.
#pragma once

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/graph.h"
#include "partition/partitioner.h"

namespace loom::exec {

struct PlanOrder {
  std::vector<size_t> groups;                                      // indices into Assignment::groups
  std::unordered_map<ir::NodeId, size_t> position;                 // node -> place in a topological order
  std::unordered_map<std::string, std::vector<ir::NodeId>> readers;  // value -> nodes reading it (inputs, captures)
  std::unordered_set<std::string> graph_outputs;
};

Expected<PlanOrder> order_groups(const ir::Graph& graph, const partition::Assignment& assignment);

}  // namespace loom::exec
