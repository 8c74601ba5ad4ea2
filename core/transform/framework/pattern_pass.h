// The two steps every pattern-rewriting pass shares: find the matches on a
// read-only GraphMatcher, keeping those that share no node with an earlier
// one; then apply each with its own GraphPatch, where a rejected patch is
// logged and skipped so the graph stays as it was.
#pragma once

#include <set>
#include <vector>

#include "base/logging.h"
#include "transform/framework/graph_matcher.h"
#include "transform/framework/graph_patch.h"
#include "transform/framework/pass.h"

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

// commit_or_skip for fusions: each added node that takes over an output of
// a replaced node (the fused op, not helpers such as an index Cast) must be
// accepted by ctx.accept_fusion, else nothing is applied.
inline bool commit_fusion(GraphPatch& patch, const ir::Graph& graph, const PassContext& ctx, bool* changed) {
  if (ctx.accept_fusion) {
    const std::vector<ir::NodeId> replaced = patch.removed_nodes();
    std::set<std::string> taken_over;
    for (ir::NodeId id : replaced)
      if (const ir::Node* n = graph.find_node(id)) taken_over.insert(n->outputs.begin(), n->outputs.end());
    for (const ir::Node& n : patch.added_nodes()) {
      bool fused = false;
      for (const std::string& o : n.outputs) fused = fused || (!o.empty() && taken_over.count(o));
      if (fused && !ctx.accept_fusion(graph, replaced, n, patch.staged_types(), patch.staged_initializers())) return false;
    }
  }
  return commit_or_skip(patch, ctx, changed);
}

// The usual end of a fusion: `replaced` out, `fused` in (its domain
// imported), committed through commit_fusion.
inline bool replace_with_fused(GraphPatch& patch, const ir::Graph& graph, const PassContext& ctx, bool* changed,
                               const std::vector<ir::NodeId>& replaced, ir::Node fused) {
  for (ir::NodeId id : replaced) patch.remove_node(id);
  if (!fused.domain.empty()) patch.import_domain(fused.domain, 1);
  patch.add_node(std::move(fused));
  return commit_fusion(patch, graph, ctx, changed);
}

}  // namespace loom::transform
