// The two steps every pattern-rewriting pass shares: find the matches on a
// read-only GraphMatcher, keeping those that share no node with an earlier
// one; then apply each with its own GraphPatch, where a rejected patch is
// logged and skipped so the graph stays as it was.
#pragma once

#include <set>
#include <vector>

#include "base/logging.h"
#include "transform/graph_matcher.h"
#include "transform/graph_patch.h"
#include "transform/pass.h"

namespace loom::transform {

// `match(matcher, node)` returns std::optional<Match>; Match has a
// `std::vector<ir::NodeId> nodes` member (the nodes the rewrite replaces).
template <class Match, class MatchFn>
std::vector<Match> disjoint_matches(const ir::Graph& graph, MatchFn match) {
  std::vector<Match> out;
  GraphMatcher m(graph);
  std::set<ir::NodeId> taken;
  for (const auto& n : graph.nodes()) {
    auto found = match(m, *n);
    if (!found) continue;
    bool overlaps = false;
    for (ir::NodeId id : found->nodes) overlaps |= taken.count(id) > 0;
    if (overlaps) continue;
    taken.insert(found->nodes.begin(), found->nodes.end());
    out.push_back(std::move(*found));
  }
  return out;
}

// Commits `patch`; sets *changed when it applied. A rejected patch is
// logged at debug level (its message names the pass and the node).
inline bool commit_or_skip(GraphPatch& patch, const PassContext& ctx, bool* changed) {
  Status st = patch.commit();
  if (!st) {
    log::logger()->debug("{}: {}", ctx.model_name, st.message());
    return false;
  }
  *changed = true;
  return true;
}

}  // namespace loom::transform
