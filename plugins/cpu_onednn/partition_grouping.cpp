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

// The grouping state and the reachability questions the acyclicity rule
// asks. Node v may join the group G of a producer unless another producer q
// of v, not in G, is reachable from a member of G (the path G -> q -> v
// leaves G and comes back). Each question is a backward search from q that
// stops at G's members and never goes above G's first node in topological
// order, so the usual graph (chains, fans into a Concat or Sum) answers in a
// few steps. Searches share a budget linear in the graph's size: once it is
// spent every question answers "reachable", which only starts more groups
// (never a cycle), so no graph makes grouping quadratic.
class Grouper {
 public:
  Grouper(const GroupingInput& in, std::vector<std::vector<size_t>> producers)
      : in_(in), producers_(std::move(producers)), position_(in.nodes.size(), 0), group_(in.nodes.size(), kNoGroup),
        seen_(in.nodes.size(), 0), budget_(64 * in.nodes.size() + (size_t{1} << 20)) {}

  std::vector<std::vector<size_t>> run() {
    const std::vector<size_t> order = topological_order(in_.nodes, producers_);
    for (size_t k = 0; k < order.size(); ++k) position_[order[k]] = k;
    for (size_t v : order) {
      if (in_.verdicts[v].role == OpRole::kUnsupported) continue;
      int chosen = kNoGroup;
      for (size_t p : producers_[v]) {
        if (budget_ == 0) break;
        const int g = group_[p];
        if (g != kNoGroup && may_join(v, g)) {
          chosen = g;
          break;
        }
      }
      if (chosen == kNoGroup) {
        chosen = static_cast<int>(groups_.size());
        groups_.emplace_back();
        first_.push_back(position_[v]);
      }
      group_[v] = chosen;
      groups_[chosen].push_back(v);
    }
    return std::move(groups_);
  }

 private:
  // No producer of v outside group g is reachable from g.
  bool may_join(size_t v, int g) {
    for (size_t q : producers_[v])
      if (group_[q] != g && reachable_from(g, q)) return false;
    return true;
  }

  // Some member of group g reaches node q (q not in g); conservatively true
  // once the search budget is spent.
  bool reachable_from(int g, size_t q) {
    ++stamp_;
    stack_.assign(1, q);
    seen_[q] = stamp_;
    while (!stack_.empty()) {
      const size_t w = stack_.back();
      stack_.pop_back();
      for (size_t p : producers_[w]) {
        if (budget_ == 0) return true;
        --budget_;
        if (group_[p] == g) return true;
        // Nodes before g's first member cannot be reached from g.
        if (position_[p] < first_[g] || seen_[p] == stamp_) continue;
        seen_[p] = stamp_;
        stack_.push_back(p);
      }
    }
    return false;
  }

  const GroupingInput& in_;
  const std::vector<std::vector<size_t>> producers_;  // distinct producers of each node, ascending
  std::vector<size_t> position_;                      // per node: its index in the topological order
  std::vector<int> group_;                            // per node: its group, or kNoGroup
  std::vector<std::vector<size_t>> groups_;           // members in the order they joined
  std::vector<size_t> first_;                         // per group: its first member's position
  std::vector<uint64_t> seen_;                        // per node: the search that last reached it
  uint64_t stamp_ = 0;
  std::vector<size_t> stack_;
  size_t budget_;  // search steps left
};

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
  std::vector<std::vector<size_t>> groups = Grouper(in, std::move(producers)).run();
  std::vector<std::vector<size_t>> result;
  for (auto& g : groups) {
    const bool computes = std::any_of(g.begin(), g.end(), [&](size_t i) { return in.verdicts[i].role != OpRole::kReshape; });
    if (computes) result.push_back(std::move(g));
  }
  return result;
}

}  // namespace loom::onednn
