#include "partition_grouping.h"

#include <algorithm>
#include <map>
#include <set>

namespace loom::onednn {
namespace {

constexpr int kNoGroup = -1;

// Topological order of the nodes (graph order is usually one already; this
// does not rely on it). Nodes in a cycle (invalid graphs) are left out.
std::vector<size_t> topological_order(const std::vector<NodeSpec>& nodes,
                                      const std::vector<std::vector<size_t>>& producers) {
  std::vector<size_t> pending(nodes.size(), 0);
  std::vector<std::vector<size_t>> consumers(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    pending[i] = producers[i].size();
    for (size_t p : producers[i]) consumers[p].push_back(i);
  }
  std::vector<size_t> order;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (pending[i] == 0) order.push_back(i);
  for (size_t k = 0; k < order.size(); ++k)
    for (size_t c : consumers[order[k]])
      if (--pending[c] == 0) order.push_back(c);
  return order;
}

}  // namespace

std::vector<std::vector<size_t>> group_supported_nodes(const GroupingInput& in) {
  const size_t n = in.nodes.size();
  std::map<std::string, size_t> producer_of;
  for (size_t i = 0; i < n; ++i)
    for (const std::string& o : in.nodes[i].outputs)
      if (!o.empty()) producer_of[o] = i;
  // Distinct producers of each node (a node reading one value twice counts once).
  std::vector<std::vector<size_t>> producers(n);
  for (size_t i = 0; i < n; ++i) {
    std::set<size_t> ps;
    for (const std::string& v : in.nodes[i].inputs) {
      auto it = producer_of.find(v);
      if (!v.empty() && it != producer_of.end() && it->second != i) ps.insert(it->second);
    }
    producers[i].assign(ps.begin(), ps.end());
  }

  std::vector<int> group(n, kNoGroup);
  // ancestors[i]: groups node i depends on (its own included);
  // via_outside[i]: groups it reaches only through some non-member node.
  std::vector<std::set<int>> ancestors(n), via_outside(n);
  std::vector<std::vector<size_t>> groups;
  for (size_t v : topological_order(in.nodes, producers)) {
    for (size_t p : producers[v]) {
      ancestors[v].insert(ancestors[p].begin(), ancestors[p].end());
      via_outside[v].insert(via_outside[p].begin(), via_outside[p].end());
      // Paths through p to groups p is not a member of leave those groups at p.
      for (int g : ancestors[p])
        if (g != group[p]) via_outside[v].insert(g);
    }
    const OpRole role = in.verdicts[v].role;
    if (role == OpRole::kUnsupported) continue;
    int chosen = kNoGroup;
    for (size_t p : producers[v]) {
      const int g = group[p];
      if (g != kNoGroup && !via_outside[v].count(g)) {
        chosen = g;
        break;
      }
    }
    if (chosen == kNoGroup) {
      chosen = static_cast<int>(groups.size());
      groups.emplace_back();
    }
    group[v] = chosen;
    groups[chosen].push_back(v);
    ancestors[v].insert(chosen);
  }

  std::vector<std::vector<size_t>> result;
  for (auto& g : groups) {
    const bool computes = std::any_of(g.begin(), g.end(), [&](size_t i) { return in.verdicts[i].role != OpRole::kReshape; });
    if (computes) result.push_back(std::move(g));
  }
  return result;
}

}  // namespace loom::onednn
