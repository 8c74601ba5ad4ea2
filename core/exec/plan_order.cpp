#include "exec/plan_order.h"

#include <algorithm>
#include <queue>
#include <set>

namespace loom::exec {

Expected<PlanOrder> order_groups(const ir::Graph& graph, const partition::Assignment& assignment) {
  PlanOrder out;
  LOOM_ASSIGN_OR_RETURN(std::vector<ir::Node*> nodes, graph.topological_order());
  const size_t n = assignment.groups.size();
  std::unordered_map<ir::NodeId, size_t> group_of;
  for (ir::Node* node : nodes) {
    auto it = assignment.group_of.find(node->id);
    if (it == assignment.group_of.end() || it->second >= n)
      return invalid_argument("node " + node->label() + " is in no partition");
    group_of[node->id] = it->second;
  }
  std::unordered_map<std::string, size_t> producer_group;
  out.graph_outputs.insert(graph.outputs.begin(), graph.outputs.end());
  for (size_t i = 0; i < nodes.size(); ++i) {
    out.position[nodes[i]->id] = i;
    for (const std::string& o : nodes[i]->outputs)
      if (!o.empty()) producer_group[o] = group_of.at(nodes[i]->id);
  }
  std::vector<std::set<size_t>> succ(n);
  std::vector<size_t> pending(n, 0), first(n, SIZE_MAX);
  for (ir::Node* node : nodes) {
    const size_t g = group_of.at(node->id);
    first[g] = std::min(first[g], out.position[node->id]);
    for (const std::string& v : ir::values_read(*node)) {
      out.readers[v].push_back(node->id);
      auto it = producer_group.find(v);
      if (it != producer_group.end() && it->second != g && succ[it->second].insert(g).second) ++pending[g];
    }
  }
  auto later = [&](size_t a, size_t b) { return first[a] > first[b]; };
  std::priority_queue<size_t, std::vector<size_t>, decltype(later)> ready(later);
  for (size_t g = 0; g < n; ++g)
    if (pending[g] == 0) ready.push(g);
  std::vector<size_t>& order = out.groups;
  while (!ready.empty()) {
    size_t g = ready.top();
    ready.pop();
    order.push_back(g);
    for (size_t s : succ[g])
      if (--pending[s] == 0) ready.push(s);
  }
  if (order.size() != n) return invalid_graph("partitions depend on each other in a cycle");
  return out;
}

}  // namespace loom::exec
