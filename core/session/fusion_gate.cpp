#include "session/fusion_gate.h"

#include "base/logging.h"

namespace loom::session {

void FusionGate::place_current(const ir::Graph& graph) {
  placed_ = true;
  partition::PartitionInputs pin = in_;
  pin.graph = &graph;
  auto assignment = partition::partition(pin);
  if (!assignment) {
    // The real partition will report it; without a placement every fusion is allowed.
    log::logger()->debug("{}: fusion gate: trial partition failed: {}", in_.model_name,
                         assignment.status().message());
    return;
  }
  for (const auto& [node, group] : assignment->group_of) ep_of_node_[node] = assignment->groups[group].ep;
}

bool FusionGate::runs(size_t ep, const ir::Graph& graph, const ir::Node& fused,
                      const std::map<std::string, ir::ValueType>& staged,
                      const std::map<std::string, Tensor>& staged_initializers) const {
  auto type_of = [&](const std::string& v) -> const ir::ValueType* {
    auto s = staged.find(v);
    return s != staged.end() ? &s->second : graph.type_of(v);
  };
  std::string key = std::to_string(ep) + "|" + fused.domain + "|" + fused.op_type + "|" + std::to_string(fused.opset);
  for (const std::string& in : fused.inputs) {
    const ir::ValueType* t = in.empty() ? nullptr : type_of(in);
    key += "|" + (in.empty() ? std::string("-") : (t ? t->to_string() : std::string("?"))) +
           (graph.is_initializer(in) || staged_initializers.count(in) ? "c" : "");
  }
  for (const std::string& out : fused.outputs) key += out.empty() ? "|-" : "|o";
  for (const ir::Attribute& a : fused.attributes) {
    key += "|" + a.name + "=" + std::to_string(a.i) + "," + std::to_string(a.f) + "," + a.s;
    for (int64_t v : a.ints) key += "," + std::to_string(v);
    for (float v : a.floats) key += "," + std::to_string(v);
  }
  if (auto cached = answers_.find(key); cached != answers_.end()) return cached->second;
  const bool answer = runs_uncached(ep, graph, fused, type_of, staged_initializers);
  answers_[key] = answer;
  return answer;
}

bool FusionGate::runs_uncached(size_t ep, const ir::Graph& graph, const ir::Node& fused,
                               const std::function<const ir::ValueType*(const std::string&)>& type_of,
                               const std::map<std::string, Tensor>& staged_initializers) const {
  // The fused node alone, with the types and constants it reads.
  ir::Graph one;
  one.name = "fusion_check";
  one.opsets = graph.opsets;
  one.op_schemas = graph.op_schemas;
  auto it = one.opsets.find(fused.domain);
  if (it == one.opsets.end()) one.opsets[fused.domain] = fused.opset;
  for (const std::string& in : fused.inputs) {
    if (in.empty() || one.value_types.count(in) || one.initializers.count(in)) continue;
    if (graph.is_initializer(in) && !graph.is_graph_input(in)) {
      one.initializers[in] = graph.initializers.at(in);
    } else if (auto s = staged_initializers.find(in); s != staged_initializers.end()) {
      one.initializers[in] = s->second;  // a constant the same rewrite adds (a transposed weight)
    } else {
      one.inputs.push_back(in);
    }
    if (const ir::ValueType* t = type_of(in)) one.value_types[in] = *t;
  }
  for (const std::string& out : fused.outputs) {
    if (out.empty()) continue;
    one.outputs.push_back(out);
    if (const ir::ValueType* t = type_of(out)) one.value_types[out] = *t;
  }
  const ir::Node& node = one.add_node(fused);
  partition::PartitionInputs pin;
  pin.graph = &one;
  pin.eps = {in_.eps[ep]};
  pin.priority_count = 1;
  pin.fallback = -1;
  pin.policy = FallbackPolicy::kAllow;
  pin.model_name = in_.model_name;
  auto assignment = partition::partition(pin);
  return assignment && assignment->group_of.count(node.id) > 0;
}

std::optional<size_t> FusionGate::placement_of(const ir::Graph& graph, const std::vector<ir::NodeId>& replaced) const {
  std::optional<size_t> best;
  for (ir::NodeId id : replaced) {
    std::optional<size_t> ep;
    if (auto it = ep_of_node_.find(id); it != ep_of_node_.end()) {
      ep = it->second;
    } else if (const ir::Node* n = graph.find_node(id); n != nullptr && !n->outputs.empty()) {
      auto f = ep_of_fused_.find(n->outputs[0]);  // a node an earlier fusion made
      if (f != ep_of_fused_.end()) ep = f->second;
    }
    if (ep && (!best || *ep < *best)) best = ep;
  }
  return best;
}

bool FusionGate::moves_up(const ir::Graph& graph, const std::vector<ir::NodeId>& replaced, const ir::Node& candidate,
                          const std::map<std::string, ir::ValueType>& staged,
                          const std::map<std::string, Tensor>& staged_initializers) {
  if (!placed_) place_current(graph);
  const std::optional<size_t> now = placement_of(graph, replaced);
  if (!now) return false;
  // eps[0, priority_count) are in priority order; the fallback, if it is
  // not among them, ranks after every one.
  const size_t rank = *now < in_.priority_count ? *now : in_.priority_count;
  if (rank == 0) return false;  // already on the first provider: its own types stand
  for (size_t ep = 0; ep < rank; ++ep)
    if (runs(ep, graph, candidate, staged, staged_initializers)) return true;
  return runs(*now, graph, candidate, staged, staged_initializers);
}

bool FusionGate::accept(const ir::Graph& graph, const std::vector<ir::NodeId>& replaced, const ir::Node& fused,
                        const std::map<std::string, ir::ValueType>& staged,
                        const std::map<std::string, Tensor>& staged_initializers) {
  if (!placed_) place_current(graph);
  if (ep_of_node_.empty()) return true;
  const std::optional<size_t> best = placement_of(graph, replaced);
  if (!best) return true;
  if (!runs(*best, graph, fused, staged, staged_initializers)) {
    log::logger()->debug("{}: fusion into {} declined: provider '{}' would not run it", in_.model_name,
                         fused.label(), in_.eps[*best]->name());
    return false;
  }
  if (!fused.outputs.empty()) ep_of_fused_[fused.outputs[0]] = *best;
  return true;
}

bool FusionGate::prefers(const ir::Graph& graph, const std::vector<ir::NodeId>& replaced, const ir::Node& candidate,
                         const std::map<std::string, ir::ValueType>& staged,
                         const std::map<std::string, Tensor>& staged_initializers) {
  // Where no provider runs the candidate at all (a CPU-only session asked
  // about a channels-last node), the whole graph's trial placement is not
  // needed: each provider answers for a one-node graph, once per kind of node.
  bool any = false;
  for (size_t ep = 0; ep < in_.eps.size() && !any; ++ep) any = runs(ep, graph, candidate, staged, staged_initializers);
  if (!any) return false;
  if (!placed_) place_current(graph);
  const std::optional<size_t> ep = placement_of(graph, replaced);
  if (!ep || !runs(*ep, graph, candidate, staged, staged_initializers)) return false;
  if (!candidate.outputs.empty()) ep_of_fused_[candidate.outputs[0]] = *ep;
  return true;
}

}  // namespace loom::session
