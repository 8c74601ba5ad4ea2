#include "ir/graph.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace loom::ir {

std::string ValueType::to_string() const {
  if (kind == ValueKind::kMap || key_dtype != DType::kUndefined) {
    const std::string m = "map(" + dtype_name(key_dtype) + "," + dtype_name(dtype) + ")";
    return kind == ValueKind::kSequence ? "seq(" + m + ")" : m;
  }
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
  by_id_[nodes_.back()->id] = nodes_.back().get();
  return *nodes_.back();
}

void Graph::remove_nodes(const std::set<NodeId>& ids) {
  if (ids.empty()) return;
  for (NodeId id : ids) by_id_.erase(id);
  nodes_.erase(std::remove_if(nodes_.begin(), nodes_.end(),
                              [&](const std::unique_ptr<Node>& n) { return ids.count(n->id) > 0; }),
               nodes_.end());
}

Node* Graph::find_node(NodeId id) const {
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : it->second;
}

const ValueType* Graph::type_of(const std::string& value) const {
  for (const Graph* g = this; g != nullptr; g = g->parent) {
    auto it = g->value_types.find(value);
    if (it != g->value_types.end()) return &it->second;
  }
  return nullptr;
}

const Tensor* Graph::initializer_in_scope(const std::string& value) const {
  for (const Graph* g = this; g != nullptr; g = g->parent) {
    auto it = g->initializers.find(value);
    if (it != g->initializers.end()) return &it->second;
  }
  return nullptr;
}

const Tensor* Graph::constant_in_scope(const std::string& value) const {
  for (const Graph* g = this; g != nullptr; g = g->parent) {
    auto it = g->initializers.find(value);
    if (it != g->initializers.end()) return g->is_graph_input(value) ? nullptr : &it->second;
  }
  return nullptr;
}

DType tensor_element_type(const Graph& g, const std::string& value) {
  if (value.empty()) return DType::kUndefined;
  if (const ValueType* t = g.type_of(value)) return t->kind == ValueKind::kTensor ? t->dtype : DType::kUndefined;
  const Tensor* init = g.initializer_in_scope(value);
  return init != nullptr ? init->dtype() : DType::kUndefined;
}

std::optional<std::vector<int64_t>> int_constant(const Graph& g, const std::string& value) {
  auto it = g.initializers.find(value);
  if (it == g.initializers.end() || g.is_graph_input(value)) return std::nullopt;
  const Tensor& t = it->second;
  const size_t n = static_cast<size_t>(t.element_count());
  if (t.dtype() == DType::kInt64) return std::vector<int64_t>(t.data_as<int64_t>(), t.data_as<int64_t>() + n);
  if (t.dtype() == DType::kInt32) return std::vector<int64_t>(t.data_as<int32_t>(), t.data_as<int32_t>() + n);
  return std::nullopt;
}

bool Graph::is_graph_input(const std::string& value) const {
  return std::find(inputs.begin(), inputs.end(), value) != inputs.end();
}

bool Graph::is_graph_output(const std::string& value) const {
  return std::find(outputs.begin(), outputs.end(), value) != outputs.end();
}

// Linear in the graph (hash lookups by name, nodes by index): every pass
// and the partitioner call it.
Expected<std::vector<Node*>> Graph::topological_order() const {
  const size_t count = nodes_.size();
  std::unordered_map<std::string_view, size_t> producer;  // value -> index in nodes_
  producer.reserve(count * 2);
  for (size_t i = 0; i < count; ++i)
    for (const std::string& o : nodes_[i]->outputs)
      if (!o.empty()) {
        auto [it, inserted] = producer.emplace(o, i);
        if (!inserted)
          return invalid_graph("value '" + o + "' is produced by both node " + nodes_[it->second]->label() +
                               " and node " + nodes_[i]->label());
      }
  // Values available without a producer in this graph: its inputs and
  // initializers, and what an enclosing graph defines -- including outputs
  // of its nodes that no type was recorded for (an earlier If's outputs,
  // say), collected once, on the first value not found otherwise.
  const std::unordered_set<std::string_view> graph_inputs(inputs.begin(), inputs.end());
  std::unordered_set<std::string_view> outer_outputs;
  bool outer_outputs_ready = false;
  auto available_outside = [&](const std::string& v) {
    if (v.empty() || initializers.count(v) || graph_inputs.count(v)) return true;
    for (const Graph* g = parent; g != nullptr; g = g->parent)
      if (g->initializers.count(v) || g->is_graph_input(v) || g->value_types.count(v)) return true;
    if (!outer_outputs_ready) {
      for (const Graph* g = parent; g != nullptr; g = g->parent)
        for (const auto& node : g->nodes_)
          for (const std::string& o : node->outputs)
            if (!o.empty()) outer_outputs.insert(o);
      outer_outputs_ready = true;
    }
    return outer_outputs.count(v) > 0;
  };
  // Edges producer -> consumer, each once per pair.
  std::vector<std::pair<size_t, size_t>> edges;
  std::vector<size_t> pending(count, 0);
  std::vector<size_t> last_reader(count, SIZE_MAX);  // per producer: the last node counted as its reader
  for (size_t i = 0; i < count; ++i) {
    const Node& n = *nodes_[i];
    auto depend = [&](const std::string& v) {
      auto it = producer.find(v);
      if (it == producer.end()) return Status::ok();
      if (it->second == i) return invalid_graph("node " + n.label() + " consumes its own output '" + v + "'");
      if (last_reader[it->second] != i) {
        last_reader[it->second] = i;
        ++pending[i];
        edges.emplace_back(it->second, i);
      }
      return Status::ok();
    };
    for (const std::string& v : n.inputs) {
      if (!producer.count(v) && !available_outside(v))
        return invalid_graph("node " + n.label() + " reads value '" + v +
                             "' which is neither a graph input, an initializer nor any node's output");
      LOOM_RETURN_IF_ERROR(depend(v));
    }
    // Subgraph bodies capture outer values: they are inputs of this node too.
    for (const std::string& v : captured_values(n)) LOOM_RETURN_IF_ERROR(depend(v));
  }
  // Consumers of each node in edge order (a counting sort of the edges).
  std::vector<size_t> first_consumer(count + 1, 0), consumers(edges.size());
  for (const auto& [from, to] : edges) ++first_consumer[from + 1];
  for (size_t i = 0; i < count; ++i) first_consumer[i + 1] += first_consumer[i];
  {
    std::vector<size_t> next(first_consumer.begin(), first_consumer.end() - 1);
    for (const auto& [from, to] : edges) consumers[next[from]++] = to;
  }
  // Keep the model's own order among ready nodes (stable, readable plans).
  std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> queue;
  for (size_t i = 0; i < count; ++i)
    if (pending[i] == 0) queue.push(i);
  std::vector<Node*> order;
  order.reserve(count);
  while (!queue.empty()) {
    const size_t i = queue.top();
    queue.pop();
    order.push_back(nodes_[i].get());
    for (size_t k = first_consumer[i]; k < first_consumer[i + 1]; ++k)
      if (--pending[consumers[k]] == 0) queue.push(consumers[k]);
  }
  if (order.size() != count) {
    for (size_t i = 0; i < count; ++i)
      if (pending[i] != 0) return invalid_graph("graph '" + name + "' has a cycle through node " + nodes_[i]->label());
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

bool gain_element_type(Graph& g, const std::string& value, DType dtype) {
  if (value.empty() || dtype == DType::kUndefined || g.is_initializer(value)) return false;
  auto [it, fresh] = g.value_types.try_emplace(value);
  ValueType& t = it->second;
  if (!fresh && !(t.kind == ValueKind::kUnknown || (t.kind == ValueKind::kTensor && t.dtype == DType::kUndefined)))
    return false;
  t.kind = ValueKind::kTensor;
  t.dtype = dtype;
  return true;
}

std::vector<Graph*> subgraphs_of(const Node& node) {
  std::vector<Graph*> out;
  for (const Attribute& a : node.attributes) {
    if (a.graph) out.push_back(a.graph.get());
    for (const auto& sub : a.graphs)
      if (sub) out.push_back(sub.get());
  }
  return out;
}

std::set<std::string> captured_values(const Node& node) {
  std::set<std::string> out;
  for (const Graph* sg : subgraphs_of(node))
    for (const std::string& v : sg->outer_scope_references()) out.insert(v);
  return out;
}

std::vector<std::string> values_read(const Node& node) {
  std::vector<std::string> r = node.inputs;
  for (const std::string& v : captured_values(node)) r.push_back(v);
  return r;
}

}  // namespace loom::ir
