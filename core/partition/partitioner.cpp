#include "partition/partitioner.h"

#include <deque>
#include <map>
#include <set>
#include <unordered_map>

#include "base/logging.h"
#include "partition/kernel_match.h"
#include "plugin_host/abi_objects.h"

namespace loom::partition {
namespace {

// Node-level data-flow edges, including outer-scope captures by subgraphs.
struct Edges {
  std::unordered_map<ir::NodeId, std::vector<ir::NodeId>> consumers;
};

Edges build_edges(const ir::Graph& g) {
  std::unordered_map<std::string, ir::NodeId> producer;
  for (const auto& n : g.nodes())
    for (const std::string& o : n->outputs)
      if (!o.empty()) producer[o] = n->id;
  Edges e;
  for (const auto& n : g.nodes()) {
    const std::vector<std::string> read = ir::values_read(*n);
    for (const std::string& v : std::set<std::string>(read.begin(), read.end())) {
      auto it = producer.find(v);
      if (it != producer.end() && it->second != n->id) e.consumers[it->second].push_back(n->id);
    }
  }
  return e;
}

class Partitioner {
 public:
  explicit Partitioner(const PartitionInputs& in) : in_(in), graph_(*in.graph), edges_(build_edges(*in.graph)) {}

  Expected<Assignment> run() {
    LOOM_ASSIGN_OR_RETURN(order_, graph_.topological_order());
    for (ir::Node* n : order_) unassigned_.insert(n->id);
    for (size_t e = 0; e < in_.priority_count && !unassigned_.empty(); ++e) LOOM_RETURN_IF_ERROR(ask(e));
    if (!unassigned_.empty()) LOOM_RETURN_IF_ERROR(fall_back());
    build_report();
    return std::move(out_);
  }

 private:
  Status ask(size_t e) {
    plugin_host::EpInstance& ep = *in_.eps[e];
    if (ep.has_capability()) return ask_capability(e);
    if (ep.kernels().empty()) {
      for (ir::NodeId id : unassigned_) said_[id].push_back(ep.name() + ": offers no kernels");
      return Status::ok();
    }
    std::vector<ir::NodeId> taken;
    for (ir::NodeId id : unassigned_) {
      const ir::Node& n = *graph_.find_node(id);
      std::string why;
      if (const LOOM_KernelDef* k = find_kernel(ep, graph_, n, &why)) {
        add_group(e, false, {id}, k, "kernel " + n.op_type + " [opset " + std::to_string(k->since_version) + "+]");
        taken.push_back(id);
      } else {
        said_[id].push_back(ep.name() + ": " + why);
      }
    }
    for (ir::NodeId id : taken) unassigned_.erase(id);
    return Status::ok();
  }

  Status ask_capability(size_t e) {
    plugin_host::EpInstance& ep = *in_.eps[e];
    std::vector<const ir::Node*> nodes;
    for (ir::Node* n : order_)
      if (unassigned_.count(n->id)) nodes.push_back(n);
    auto view = plugin_host::make_graph_view(graph_, nodes, graph_.inputs, graph_.outputs);
    LOOM_ClaimSink sink;
    sink.graph = view.get();
    LOOM_RETURN_IF_ERROR(ep.claim(view.get(), &sink));
    // Fused sets are first checked for cycles all at once, which is linear:
    // creates_cycle walks the graph below a set, so checking each claim of
    // an EP that claims many sets would be quadratic. Only when the sets
    // together do make a cycle are the claims taken again one by one,
    // dropping those that close one. Both ways keep the same claims when
    // there is no cycle: if contracting every accepted set leaves the graph
    // acyclic, contracting any of them does too.
    std::set<ir::NodeId> claimed;
    std::vector<std::pair<std::vector<uint64_t>, std::string>> dropped;
    const size_t groups_before = out_.groups.size();
    take_claims(e, sink, false, claimed, dropped);
    if (!contracted_graph_acyclic()) {
      for (size_t g = groups_before; g < out_.groups.size(); ++g)
        for (ir::NodeId id : out_.groups[g].nodes) out_.group_of.erase(id);
      out_.groups.resize(groups_before);
      claimed.clear();
      dropped.clear();
      take_claims(e, sink, true, claimed, dropped);
    }
    for (const auto& [ids, problem] : dropped) {
      log::logger()->warn("provider '{}': claim dropped: {}", ep.name(), problem);
      for (uint64_t id : ids)
        if (unassigned_.count(id)) said_[id].push_back(ep.name() + ": claim dropped (" + problem + ")");
    }
    // Custom-op nodes the EP left: through the custom-op kernels it was
    // given, as a kernel EP would take them.
    for (ir::NodeId id : unassigned_) {
      if (claimed.count(id) || ep.custom_kernels().empty()) continue;
      const ir::Node& n = *graph_.find_node(id);
      std::string why;
      if (const LOOM_KernelDef* k = find_kernel_among(ep.custom_kernels(), graph_, n, &why)) {
        add_group(e, false, {id}, k, "custom-op kernel " + n.domain + "." + n.op_type);
        claimed.insert(id);
      }
    }
    for (ir::NodeId id : unassigned_) {
      if (claimed.count(id)) continue;
      auto d = sink.declined.find(id);
      said_[id].push_back(ep.name() + ": " + (d != sink.declined.end() ? d->second : "not claimed"));
    }
    for (ir::NodeId id : claimed) unassigned_.erase(id);
    return Status::ok();
  }

  // Accepts EP e's claims in order (add_group), collecting the dropped ones
  // with their reasons; `check_cycles`: a fused set that would close a cycle
  // is split into convex parts (else the caller checks all sets together).
  void take_claims(size_t e, const LOOM_ClaimSink& sink, bool check_cycles, std::set<ir::NodeId>& claimed,
                   std::vector<std::pair<std::vector<uint64_t>, std::string>>& dropped) {
    plugin_host::EpInstance& ep = *in_.eps[e];
    for (const plugin_host::Claim& c : sink.claims) {
      std::string problem;
      for (uint64_t id : c.node_ids) {
        if (!unassigned_.count(id)) problem = "node id " + std::to_string(id) + " is not offered to this EP";
        else if (claimed.count(id)) problem = "overlaps an earlier claim of this EP";
      }
      if (problem.empty() && c.kind == LOOM_CLAIM_FUSED && !ep.can_compile())
        problem = "fused claim from an EP without a compile slot";
      const LOOM_KernelDef* kernel = nullptr;
      bool fused = c.kind == LOOM_CLAIM_FUSED;
      if (problem.empty() && c.kind == LOOM_CLAIM_KERNEL) {
        const ir::Node& n = *graph_.find_node(c.node_ids[0]);
        std::string why;
        kernel = ep.kernels().empty() ? nullptr : find_kernel(ep, graph_, n, &why);
        if (kernel == nullptr) {
          if (ep.can_compile()) fused = true;  // a single-node partition
          else problem = "claimed without a matching kernel (" + why + ")";
        }
      }
      if (!problem.empty()) {
        dropped.emplace_back(c.node_ids, problem);
        continue;
      }
      if (check_cycles && fused && c.node_ids.size() > 1 && creates_cycle(c.node_ids)) {
        take_convex_parts(e, c, claimed, dropped);
        continue;
      }
      add_group(e, fused, std::vector<ir::NodeId>(c.node_ids.begin(), c.node_ids.end()), kernel, c.reason);
      for (uint64_t id : c.node_ids) claimed.insert(id);
    }
  }

  // A fused claim that is not convex (a path leaves it and comes back, e.g.
  // through a node another EP runs) becomes several partitions, as a
  // compiler given the same claim would cut it: the parts are the claim's
  // nodes grouped by how many times a path from the claim to them has left
  // it. No path leaves a part and comes back (it would reach a later
  // part), and paths only lead from a part to later ones, so the parts run
  // in order. A part that still closes a cycle through another EP's fused
  // group is dropped.
  void take_convex_parts(size_t e, const plugin_host::Claim& c, std::set<ir::NodeId>& claimed,
                         std::vector<std::pair<std::vector<uint64_t>, std::string>>& dropped) {
    const std::set<ir::NodeId> set(c.node_ids.begin(), c.node_ids.end());
    std::unordered_map<ir::NodeId, int> exits;  // most exits on a path from the set; absent: unreachable
    for (const ir::Node* n : order_) {
      auto it = exits.find(n->id);
      const bool in_set = set.count(n->id) > 0;
      if (in_set && it == exits.end()) it = exits.emplace(n->id, 0).first;
      if (it == exits.end()) continue;
      auto consumers = edges_.consumers.find(n->id);
      if (consumers == edges_.consumers.end()) continue;
      for (ir::NodeId next : consumers->second) {
        const int through = it->second + (in_set && !set.count(next) ? 1 : 0);
        auto [slot, fresh] = exits.emplace(next, through);
        if (!fresh) slot->second = std::max(slot->second, through);
      }
    }
    std::map<int, std::vector<ir::NodeId>> parts;
    for (const ir::Node* n : order_)
      if (set.count(n->id)) parts[exits.at(n->id)].push_back(n->id);
    const std::string why = " (part of a claim split in " + std::to_string(parts.size()) +
                            ": other providers' nodes lie between its nodes)";
    for (auto& [level, nodes] : parts) {
      const std::vector<uint64_t> ids(nodes.begin(), nodes.end());
      if (ids.size() > 1 && creates_cycle(ids)) {
        dropped.emplace_back(ids, "fused set would create a cycle between partitions");
        continue;
      }
      for (ir::NodeId id : nodes) claimed.insert(id);
      add_group(e, true, std::move(nodes), nullptr, c.reason + why);
    }
  }

  // Whether the graph with every fused group contracted to one node is
  // acyclic (Kahn's algorithm over the contracted edges).
  bool contracted_graph_acyclic() const {
    std::unordered_map<ir::NodeId, size_t> unit;  // node -> its group's unit, or its own
    size_t units = out_.groups.size();
    for (const auto& n : graph_.nodes()) {
      auto g = out_.group_of.find(n->id);
      unit[n->id] = g != out_.group_of.end() && out_.groups[g->second].fused ? g->second : units++;
    }
    std::vector<std::vector<size_t>> next(units);
    std::vector<size_t> pending(units, 0);
    for (const auto& [from, to] : edges_.consumers)
      for (ir::NodeId c : to) {
        const size_t a = unit.at(from), b = unit.at(c);
        if (a == b) continue;
        next[a].push_back(b);
        ++pending[b];
      }
    std::vector<size_t> ready;
    for (size_t u = 0; u < units; ++u)
      if (pending[u] == 0) ready.push_back(u);
    size_t done = 0;
    while (!ready.empty()) {
      const size_t u = ready.back();
      ready.pop_back();
      ++done;
      for (size_t v : next[u])
        if (--pending[v] == 0) ready.push_back(v);
    }
    return done == units;
  }

  // True if contracting `set` (with existing fused groups contracted too)
  // puts it on a cycle: some path leaves the set and comes back.
  bool creates_cycle(const std::vector<uint64_t>& set) const {
    std::set<ir::NodeId> s(set.begin(), set.end());
    std::deque<ir::NodeId> queue;
    std::set<ir::NodeId> seen;
    auto push_consumers = [&](ir::NodeId id, bool from_set) {
      auto it = edges_.consumers.find(id);
      if (it == edges_.consumers.end()) return;
      for (ir::NodeId c : it->second)
        if (!(from_set && s.count(c)) && seen.insert(c).second) queue.push_back(c);
    };
    // Start from the edges that leave the set; reaching the set again is a cycle.
    for (ir::NodeId id : s) push_consumers(id, true);
    while (!queue.empty()) {
      ir::NodeId id = queue.front();
      queue.pop_front();
      if (s.count(id)) return true;
      push_consumers(id, false);
      auto g = out_.group_of.find(id);
      if (g != out_.group_of.end() && out_.groups[g->second].fused)
        for (ir::NodeId member : out_.groups[g->second].nodes)
          if (seen.insert(member).second) queue.push_back(member);
    }
    return false;
  }

  void add_group(size_t e, bool fused, std::vector<ir::NodeId> nodes, const LOOM_KernelDef* k, std::string reason) {
    Group g;
    g.ep = e;
    g.fused = fused;
    g.nodes = std::move(nodes);
    g.kernel = k;
    g.reason = std::move(reason);
    for (ir::NodeId id : g.nodes) out_.group_of[id] = out_.groups.size();
    out_.groups.push_back(std::move(g));
  }

  Status fall_back() {
    auto describe = [&](const std::set<ir::NodeId>& ids) {
      std::string s;
      for (ir::NodeId id : ids) {
        const ir::Node& n = *graph_.find_node(id);
        s += "\n  node " + n.label() + " opset " + std::to_string(n.opset) + ":";
        for (const std::string& r : said_[id]) s += " [" + r + "]";
      }
      return s;
    };
    if (in_.policy == FallbackPolicy::kDeny)
      return invalid_graph(in_.model_name + ": " + std::to_string(unassigned_.size()) +
                           " node(s) not claimed by any configured provider and fallback is 'deny':" +
                           describe(unassigned_));
    std::set<ir::NodeId> left;
    if (in_.fallback < 0) {
      left = unassigned_;
    } else {
      const size_t e = static_cast<size_t>(in_.fallback);
      plugin_host::EpInstance& ep = *in_.eps[e];
      for (ir::NodeId id : unassigned_) {
        const ir::Node& n = *graph_.find_node(id);
        std::string why;
        if (const LOOM_KernelDef* k = find_kernel(ep, graph_, n, &why)) {
          add_group(e, false, {id}, k, "fallback: " + n.op_type + " not claimed by a preferred provider");
          if (in_.policy == FallbackPolicy::kWarn)
            log::logger()->warn("{}: node {} falls back to '{}'", in_.model_name, n.label(), ep.name());
        } else {
          if (e >= in_.priority_count) said_[id].push_back(ep.name() + " (fallback): " + why);
          left.insert(id);
        }
      }
    }
    if (!left.empty())
      return not_implemented(in_.model_name + ": no provider can run " + std::to_string(left.size()) + " node(s):" +
                             describe(left));
    unassigned_.clear();
    return Status::ok();
  }

  void build_report() {
    std::map<size_t, PlacementReport::ProviderSummary> per_ep;
    for (ir::Node* n : order_) {
      const Group& g = out_.groups[out_.group_of.at(n->id)];
      const std::string& ep = in_.eps[g.ep]->name();
      // What the providers asked before this one said, so users see why a
      // node did not go to the provider they preferred.
      std::string reason = g.reason;
      for (const std::string& said : said_[n->id]) reason += "; " + said;
      out_.report.nodes.push_back({n->name, n->op_type, n->domain, ep, reason, n->inputs, n->outputs});
      auto& s = per_ep[g.ep];
      s.provider = ep;
      ++s.node_count;
      ++s.op_types[(n->domain.empty() ? "" : n->domain + ".") + n->op_type];
    }
    for (auto& [e, s] : per_ep) out_.report.providers.push_back(std::move(s));
  }

  const PartitionInputs& in_;
  const ir::Graph& graph_;
  Edges edges_;
  std::vector<ir::Node*> order_;
  std::set<ir::NodeId> unassigned_;
  std::map<ir::NodeId, std::vector<std::string>> said_;
  Assignment out_;
};

}  // namespace

Expected<Assignment> partition(const PartitionInputs& in) { return Partitioner(in).run(); }

}  // namespace loom::partition
