#include "transform/graph_patch.h"

#include <algorithm>
#include <unordered_map>

namespace loom::transform {
namespace {

bool defined_outside(const ir::Graph& g, const std::string& v) {
  for (const ir::Graph* p = g.parent; p != nullptr; p = p->parent)
    if (p->initializers.count(v) || p->is_graph_input(v) || p->value_types.count(v)) return true;
  return false;
}

}  // namespace

GraphPatch::GraphPatch(ir::Graph& graph, std::string why) : graph_(graph), why_(std::move(why)) {}

std::string GraphPatch::fresh_name(const std::string& hint) {
  if (!names_indexed_) {
    for (const auto& node : graph_.nodes())
      for (const std::string& o : node->outputs) names_taken_.insert(o);
    names_indexed_ = true;
  }
  auto taken = [&](const std::string& n) {
    return names_taken_.count(n) || graph_.initializers.count(n) || graph_.value_types.count(n) ||
           graph_.is_graph_input(n) || graph_.is_graph_output(n);
  };
  std::string name = hint;
  for (int k = 1; taken(name); ++k) name = hint + "_" + std::to_string(k);
  names_taken_.insert(name);
  return name;
}

std::string GraphPatch::add_initializer(const std::string& hint, Tensor value) {
  const std::string name = fresh_name(hint);
  ir::ValueType t;
  t.dtype = value.dtype();
  t.has_shape = true;
  for (int64_t d : value.dims()) t.dims.push_back(DimInfo{d, ""});
  types_[name] = t;
  initializers_[name] = std::move(value);
  return name;
}

void GraphPatch::add_node(ir::Node node) {
  for (const std::string& o : node.outputs) names_taken_.insert(o);
  added_.push_back(std::move(node));
}

void GraphPatch::remove_node(ir::NodeId id) { removed_.insert(id); }

void GraphPatch::set_input(ir::NodeId id, size_t index, std::string value) { inputs_set_[id][index] = std::move(value); }

void GraphPatch::replace_uses(const std::string& from, const std::string& to) { replaced_.emplace_back(from, to); }

void GraphPatch::import_domain(const std::string& domain, int64_t version) { imports_[domain] = version; }

void GraphPatch::set_type(const std::string& value, ir::ValueType type) { types_[value] = std::move(type); }

bool GraphPatch::empty() const {
  return added_.empty() && removed_.empty() && inputs_set_.empty() && replaced_.empty() && initializers_.empty();
}

Status GraphPatch::commit() {
  auto reject = [&](const std::string& what) { return invalid_graph(why_ + ": rewrite rejected, " + what); };
  // The nodes as they would be, before anything is applied.
  std::vector<ir::Node> result;
  std::vector<ir::NodeId> original_id;  // per result node; kNew for added ones
  constexpr ir::NodeId kNew = ~ir::NodeId{0};
  for (ir::NodeId id : removed_)
    if (graph_.find_node(id) == nullptr) return reject("it removes node #" + std::to_string(id) + ", which is not in the graph");
  for (const auto& [id, _] : inputs_set_) {
    const ir::Node* n = graph_.find_node(id);
    if (n == nullptr || removed_.count(id)) return reject("it rewires node #" + std::to_string(id) + " it also removes");
    for (const auto& [index, __] : _)
      if (index >= n->inputs.size()) return reject("input " + std::to_string(index) + " of node " + n->label() + " does not exist");
  }
  for (const auto& n : graph_.nodes()) {
    if (removed_.count(n->id)) continue;
    ir::Node copy = *n;
    auto it = inputs_set_.find(n->id);
    if (it != inputs_set_.end())
      for (const auto& [index, value] : it->second) copy.inputs[index] = value;
    result.push_back(std::move(copy));
    original_id.push_back(n->id);
  }
  for (const ir::Node& n : added_) {
    result.push_back(n);
    original_id.push_back(kNew);
  }
  std::vector<std::string> outputs = graph_.outputs;
  std::vector<ir::Node> identities;
  for (const auto& [from, to] : replaced_) {
    for (ir::Node& n : result) {
      for (std::string& in : n.inputs)
        if (in == from) in = to;
      if (ir::captured_values(n).count(from))
        return reject("node " + n.label() + " reads '" + from + "' inside a subgraph");
    }
    if (graph_.is_graph_output(from)) {
      ir::Node id;
      id.op_type = "Identity";
      id.opset = graph_.opsets.count("") ? graph_.opsets.at("") : 1;
      id.name = fresh_name(from + "/identity");
      id.inputs = {to};
      id.outputs = {from};
      identities.push_back(id);
    }
  }
  for (ir::Node& n : identities) {
    result.push_back(n);
    original_id.push_back(kNew);
  }
  // Every value produced once, every read defined, the graph outputs made.
  std::unordered_map<std::string, size_t> producer;
  for (size_t i = 0; i < result.size(); ++i)
    for (const std::string& o : result[i].outputs) {
      if (o.empty()) continue;
      if (!producer.emplace(o, i).second) return reject("value '" + o + "' would have two producers");
      if (graph_.initializers.count(o) || initializers_.count(o) || graph_.is_graph_input(o))
        return reject("node " + result[i].label() + " would overwrite input or initializer '" + o + "'");
    }
  auto defined = [&](const std::string& v) {
    return v.empty() || producer.count(v) || graph_.initializers.count(v) || initializers_.count(v) ||
           graph_.is_graph_input(v) || defined_outside(graph_, v);
  };
  std::vector<size_t> pending(result.size(), 0);
  std::vector<std::vector<size_t>> consumers(result.size());
  for (size_t i = 0; i < result.size(); ++i) {
    std::set<size_t> deps;
    for (const std::string& v : ir::values_read(result[i])) {
      if (!defined(v)) return reject("node " + result[i].label() + " would read '" + v + "', which nothing defines");
      auto p = producer.find(v);
      if (p != producer.end()) deps.insert(p->second);
    }
    for (size_t d : deps) {
      if (d == i) return reject("node " + result[i].label() + " would read its own output");
      consumers[d].push_back(i);
    }
    pending[i] = deps.size();
  }
  for (const std::string& o : outputs)
    if (!defined(o)) return reject("graph output '" + o + "' would no longer be produced");
  std::vector<size_t> ready;
  for (size_t i = 0; i < result.size(); ++i)
    if (pending[i] == 0) ready.push_back(i);
  size_t visited = 0;
  while (!ready.empty()) {
    const size_t i = ready.back();
    ready.pop_back();
    ++visited;
    for (size_t c : consumers[i])
      if (--pending[c] == 0) ready.push_back(c);
  }
  if (visited != result.size()) return reject("it would create a cycle");

  // Valid: apply.
  for (const auto& [domain, version] : imports_) {
    int64_t& v = graph_.opsets[domain];
    v = std::max(v, version);
  }
  for (auto& [name, t] : initializers_) graph_.initializers[name] = std::move(t);
  for (auto& [name, t] : types_) graph_.value_types[name] = std::move(t);
  graph_.remove_nodes(removed_);
  std::unordered_map<ir::NodeId, ir::Node*> by_id;
  for (const auto& n : graph_.nodes()) by_id[n->id] = n.get();
  for (size_t i = 0; i < result.size(); ++i)
    if (original_id[i] != kNew) by_id.at(original_id[i])->inputs = std::move(result[i].inputs);
  for (size_t i = 0; i < result.size(); ++i)
    if (original_id[i] == kNew) graph_.add_node(std::move(result[i]));
  added_.clear();
  removed_.clear();
  inputs_set_.clear();
  replaced_.clear();
  initializers_.clear();
  types_.clear();
  imports_.clear();
  return Status::ok();
}

}  // namespace loom::transform
