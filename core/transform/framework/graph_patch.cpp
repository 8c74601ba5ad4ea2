#include "transform/framework/graph_patch.h"

#include <algorithm>
#include <string_view>
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

void GraphPatch::index_inputs_outputs() {
  if (inputs_outputs_indexed_) return;
  inputs_outputs_indexed_ = true;
  input_names_.insert(graph_.inputs.begin(), graph_.inputs.end());
  output_names_.insert(graph_.outputs.begin(), graph_.outputs.end());
}

bool GraphPatch::is_input(const std::string& v) {
  index_inputs_outputs();
  return input_names_.count(v) > 0;
}

bool GraphPatch::is_output(const std::string& v) {
  index_inputs_outputs();
  return output_names_.count(v) > 0;
}

std::string GraphPatch::fresh_name(const std::string& hint) {
  if (!names_indexed_) {
    graph_outputs_.reserve(graph_.nodes().size() * 2);
    for (const auto& node : graph_.nodes())
      for (const std::string& o : node->outputs) graph_outputs_.insert(o);
    names_indexed_ = true;
  }
  auto taken = [&](const std::string& n) {
    return graph_outputs_.count(n) || names_taken_.count(n) || graph_.initializers.count(n) || graph_.value_types.count(n) ||
           is_input(n) || is_output(n);
  };
  std::string name = hint;
  for (int k = 1; taken(name); ++k) name = hint + "_" + std::to_string(k);
  names_taken_.insert(name);
  return name;
}

std::string GraphPatch::add_initializer(const std::string& hint, Tensor value) {
  const std::string name = fresh_name(hint);
  types_[name] = ir::tensor_type(value);
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

bool has_subgraphs(const ir::Node& n) {
  for (const ir::Attribute& a : n.attributes)
    if (a.graph || !a.graphs.empty()) return true;
  return false;
}

Status GraphPatch::commit() {
  auto reject = [&](const std::string& what) { return invalid_graph(why_ + ": rewrite rejected, " + what); };
  for (ir::NodeId id : removed_)
    if (graph_.find_node(id) == nullptr)
      return reject("it removes node #" + std::to_string(id) + ", which is not in the graph");
  for (const auto& [id, set] : inputs_set_) {
    const ir::Node* n = graph_.find_node(id);
    if (n == nullptr || removed_.count(id)) return reject("it rewires node #" + std::to_string(id) + " it also removes");
    for (const auto& [index, _] : set)
      if (index >= n->inputs.size())
        return reject("input " + std::to_string(index) + " of node " + n->label() + " does not exist");
  }
  // Identity nodes keeping graph outputs whose uses are redirected.
  std::vector<ir::Node> identities;
  std::unordered_map<std::string, std::string> redirect;
  for (const auto& [from, to] : replaced_) {
    redirect[from] = to;
    if (is_output(from)) {
      ir::Node id;
      id.op_type = "Identity";
      id.opset = graph_.opsets.count("") ? graph_.opsets.at("") : 1;
      id.name = fresh_name(from + "/identity");
      id.inputs = {to};
      id.outputs = {from};
      identities.push_back(std::move(id));
    }
  }
  // The nodes as they would be, as views: no node is copied. Input k of
  // view i is overrides (inputs_set_) first, then redirected uses.
  struct View {
    const ir::Node* node;
    ir::NodeId original;  // kNew for added nodes
    std::vector<std::string> inputs;  // effective inputs, filled only when they differ
    bool rewired = false;
  };
  constexpr ir::NodeId kNew = ~ir::NodeId{0};
  std::vector<View> views;
  views.reserve(graph_.nodes().size() + added_.size() + identities.size());
  for (const auto& n : graph_.nodes())
    if (!removed_.count(n->id)) views.push_back({n.get(), n->id, {}, false});
  for (const ir::Node& n : added_) views.push_back({&n, kNew, {}, false});
  for (const ir::Node& n : identities) views.push_back({&n, kNew, {}, false});
  // Redirects are followed to their end (a -> b and b -> c take a to c,
  // whatever order they were staged in; a cycle stops after as many hops as
  // there are redirects); the Identity nodes keeping graph outputs are not
  // redirected.
  const size_t first_identity = views.size() - identities.size();
  auto redirected = [&](std::string in) {
    for (size_t hops = 0; hops < replaced_.size(); ++hops) {
      auto r = redirect.find(in);
      if (r == redirect.end()) break;
      in = r->second;
    }
    return in;
  };
  for (size_t i = 0; i < first_identity; ++i) {
    View& v = views[i];
    auto set = v.original == kNew ? inputs_set_.end() : inputs_set_.find(v.original);
    bool differs = set != inputs_set_.end();
    for (const std::string& in : v.node->inputs) differs = differs || redirect.count(in) > 0;
    if (!differs) continue;
    v.inputs = v.node->inputs;
    if (set != inputs_set_.end())
      for (const auto& [index, value] : set->second) v.inputs[index] = value;
    for (std::string& in : v.inputs) in = redirected(in);
    v.rewired = true;
  }
  for (const View& v : views)
    if (!redirect.empty() && has_subgraphs(*v.node))
      for (const std::string& c : ir::captured_values(*v.node))
        if (redirect.count(c)) return reject("node " + v.node->label() + " reads '" + c + "' inside a subgraph");

  // Every value produced once, every read defined, the graph outputs made.
  std::unordered_map<std::string_view, size_t> producer;
  producer.reserve(views.size() * 2);
  for (size_t i = 0; i < views.size(); ++i)
    for (const std::string& o : views[i].node->outputs) {
      if (o.empty()) continue;
      if (!producer.emplace(o, i).second) return reject("value '" + o + "' would have two producers");
      if (views[i].original == kNew &&
          (graph_.initializers.count(o) || initializers_.count(o) || is_input(o)))
        return reject("node " + views[i].node->label() + " would overwrite input or initializer '" + o + "'");
    }
  // Defined other than by a node: an initializer, a graph input or a value
  // of an enclosing graph.
  auto defined_elsewhere = [&](const std::string& v) {
    return v.empty() || graph_.initializers.count(v) || initializers_.count(v) || is_input(v) ||
           defined_outside(graph_, v);
  };
  // The dependency edges (producer view, reader view), then Kahn's
  // algorithm over them. Runs for every patch, so one hash lookup per read
  // and no allocation per node.
  std::vector<std::pair<size_t, size_t>> edges;
  edges.reserve(views.size() * 2);
  std::vector<size_t> pending(views.size(), 0);
  for (size_t i = 0; i < views.size(); ++i) {
    const View& v = views[i];
    const size_t first_edge = edges.size();
    auto read = [&](const std::string& value) -> Status {
      auto p = producer.find(value);
      if (p != producer.end()) {
        if (p->second == i) return reject("node " + v.node->label() + " would read its own output");
        edges.emplace_back(p->second, i);
      } else if (!defined_elsewhere(value)) {
        return reject("node " + v.node->label() + " would read '" + value + "', which nothing defines");
      }
      return Status::ok();
    };
    for (const std::string& in : v.rewired ? v.inputs : v.node->inputs) LOOM_RETURN_IF_ERROR(read(in));
    if (has_subgraphs(*v.node))
      for (const std::string& c : ir::captured_values(*v.node)) LOOM_RETURN_IF_ERROR(read(c));
    // A node reading one value twice depends on its producer once.
    std::sort(edges.begin() + first_edge, edges.end());
    edges.erase(std::unique(edges.begin() + first_edge, edges.end()), edges.end());
    pending[i] = edges.size() - first_edge;
  }
  for (const std::string& o : graph_.outputs)
    if (!producer.count(o) && !defined_elsewhere(o)) return reject("graph output '" + o + "' would no longer be produced");
  // Consumers of each view, by producer (counting sort of the edges).
  std::vector<size_t> first_consumer(views.size() + 1, 0);
  for (const auto& [from, to] : edges) ++first_consumer[from + 1];
  for (size_t i = 0; i < views.size(); ++i) first_consumer[i + 1] += first_consumer[i];
  std::vector<size_t> consumers(edges.size());
  {
    std::vector<size_t> next(first_consumer.begin(), first_consumer.end() - 1);
    for (const auto& [from, to] : edges) consumers[next[from]++] = to;
  }
  std::vector<size_t> ready;
  for (size_t i = 0; i < views.size(); ++i)
    if (pending[i] == 0) ready.push_back(i);
  size_t visited = 0;
  while (!ready.empty()) {
    const size_t i = ready.back();
    ready.pop_back();
    ++visited;
    for (size_t k = first_consumer[i]; k < first_consumer[i + 1]; ++k)
      if (--pending[consumers[k]] == 0) ready.push_back(consumers[k]);
  }
  if (visited != views.size()) return reject("it would create a cycle");

  // Valid: apply.
  for (const auto& [domain, version] : imports_) {
    int64_t& v = graph_.opsets[domain];
    v = std::max(v, version);
  }
  for (auto& [name, t] : initializers_) graph_.initializers[name] = std::move(t);
  for (auto& [name, t] : types_) graph_.value_types[name] = std::move(t);
  std::unordered_map<ir::NodeId, std::vector<std::string>> new_inputs;
  std::vector<ir::Node> fresh;
  for (View& v : views) {
    if (v.original == kNew) {
      ir::Node n = *v.node;
      if (v.rewired) n.inputs = std::move(v.inputs);
      fresh.push_back(std::move(n));
    } else if (v.rewired) {
      new_inputs[v.original] = std::move(v.inputs);
    }
  }
  graph_.remove_nodes(removed_);
  for (const auto& n : graph_.nodes()) {
    auto it = new_inputs.find(n->id);
    if (it != new_inputs.end()) n->inputs = std::move(it->second);
  }
  for (ir::Node& n : fresh) graph_.add_node(std::move(n));
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
