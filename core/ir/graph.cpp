#include "ir/graph.h"

#include <algorithm>
#include <queue>
#include <unordered_map>

namespace loom::ir {

std::string ValueType::to_string() const {
  std::string s = kind == ValueKind::kSequence ? "seq(" : kind == ValueKind::kOptional ? "optional(" : "";
  s += dtype_name(dtype);
  if (has_shape) {
    s += "[";
    for (size_t i = 0; i < dims.size(); ++i) {
      if (i) s += ",";
      s += dims[i].value >= 0 ? std::to_string(dims[i].value) : (dims[i].symbol.empty() ? "?" : dims[i].symbol);
    }
    s += "]";
  }
  if (kind == ValueKind::kSequence || kind == ValueKind::kOptional) s += ")";
  return s;
}

std::string Node::label() const {
  return (name.empty() ? "#" + std::to_string(id) : "'" + name + "'") + " (" +
         (domain.empty() ? "" : domain + ".") + op_type + ")";
}

Node& Graph::add_node(Node node) {
  node.id = next_id_++;
  nodes_.push_back(std::make_unique<Node>(std::move(node)));
  return *nodes_.back();
}

void Graph::remove_nodes(const std::set<NodeId>& ids) {
  nodes_.erase(std::remove_if(nodes_.begin(), nodes_.end(),
                              [&](const std::unique_ptr<Node>& n) { return ids.count(n->id) > 0; }),
               nodes_.end());
}

Node* Graph::find_node(NodeId id) const {
  for (const auto& n : nodes_)
    if (n->id == id) return n.get();
  return nullptr;
}

const ValueType* Graph::type_of(const std::string& value) const {
  for (const Graph* g = this; g != nullptr; g = g->parent) {
    auto it = g->value_types.find(value);
    if (it != g->value_types.end()) return &it->second;
  }
  return nullptr;
}

bool Graph::is_graph_input(const std::string& value) const {
  return std::find(inputs.begin(), inputs.end(), value) != inputs.end();
}

bool Graph::is_graph_output(const std::string& value) const {
  return std::find(outputs.begin(), outputs.end(), value) != outputs.end();
}

Expected<std::vector<Node*>> Graph::topological_order() const {
  std::unordered_map<std::string, Node*> producer;
  for (const auto& n : nodes_)
    for (const std::string& o : n->outputs)
      if (!o.empty()) {
        if (producer.count(o))
          return invalid_graph("value '" + o + "' is produced by both node " + producer[o]->label() +
                               " and node " + n->label());
        producer[o] = n.get();
      }
  // Values available without a producer in this graph.
  auto available_outside = [&](const std::string& v) {
    if (v.empty() || initializers.count(v) || is_graph_input(v)) return true;
    for (const Graph* g = parent; g != nullptr; g = g->parent)
      if (g->initializers.count(v) || g->is_graph_input(v) || g->value_types.count(v)) return true;
    return false;
  };
  std::unordered_map<const Node*, size_t> pending;
  std::unordered_map<const Node*, std::vector<Node*>> consumers;
  std::vector<Node*> ready;
  for (const auto& n : nodes_) {
    size_t count = 0;
    std::set<const Node*> seen;
    auto depend = [&](const std::string& v) {
      auto it = producer.find(v);
      if (it == producer.end()) return Status::ok();
      if (it->second == n.get())
        return invalid_graph("node " + n->label() + " consumes its own output '" + v + "'");
      if (seen.insert(it->second).second) {
        ++count;
        consumers[it->second].push_back(n.get());
      }
      return Status::ok();
    };
    for (const std::string& v : n->inputs) {
      if (!producer.count(v) && !available_outside(v))
        return invalid_graph("node " + n->label() + " reads value '" + v +
                             "' which is neither a graph input, an initializer nor any node's output");
      LOOM_RETURN_IF_ERROR(depend(v));
    }
    // Subgraph bodies capture outer values: they are inputs of this node too.
    for (const std::string& v : captured_values(*n)) LOOM_RETURN_IF_ERROR(depend(v));
    pending[n.get()] = count;
    if (count == 0) ready.push_back(n.get());
  }
  std::vector<Node*> order;
  // Keep the model's own order among ready nodes (stable, readable plans).
  std::unordered_map<const Node*, size_t> position;
  for (size_t i = 0; i < nodes_.size(); ++i) position[nodes_[i].get()] = i;
  auto later = [&](Node* a, Node* b) { return position[a] > position[b]; };
  std::priority_queue<Node*, std::vector<Node*>, decltype(later)> queue(later, ready);
  while (!queue.empty()) {
    Node* n = queue.top();
    queue.pop();
    order.push_back(n);
    for (Node* c : consumers[n])
      if (--pending[c] == 0) queue.push(c);
  }
  if (order.size() != nodes_.size()) {
    for (const auto& n : nodes_)
      if (pending[n.get()] != 0)
        return invalid_graph("graph '" + name + "' has a cycle through node " + n->label());
  }
  return order;
}

std::set<std::string> Graph::outer_scope_references() const {
  std::set<std::string> defined(inputs.begin(), inputs.end());
  for (const auto& [k, v] : initializers) defined.insert(k);
  for (const auto& n : nodes_)
    for (const std::string& o : n->outputs) defined.insert(o);
  std::set<std::string> refs;
  for (const auto& n : nodes_)
    for (const std::string& v : values_read(*n))
      if (!v.empty() && !defined.count(v)) refs.insert(v);
  for (const std::string& o : outputs)
    if (!defined.count(o)) refs.insert(o);
  return refs;
}

std::set<std::string> captured_values(const Node& node) {
  std::set<std::string> out;
  for (const Attribute& a : node.attributes) {
    std::vector<std::shared_ptr<Graph>> subs = a.graphs;
    if (a.graph) subs.push_back(a.graph);
    for (const auto& sg : subs)
      for (const std::string& v : sg->outer_scope_references()) out.insert(v);
  }
  return out;
}

std::vector<std::string> values_read(const Node& node) {
  std::vector<std::string> r = node.inputs;
  for (const std::string& v : captured_values(node)) r.push_back(v);
  return r;
}

}  // namespace loom::ir
