// The IR graph: nodes, value types, graph inputs/outputs, initializers and
// opset imports. Subgraphs (If/Loop/Scan bodies) are Graphs owned by their
// node's attribute; they see outer-scope values by name through `parent`.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/node.h"
#include "ir/value_type.h"
#include "loom/status.h"

namespace loom::onnxio {
class OpSchemas;
}

namespace loom::ir {

class Graph {
 public:
  std::string name;
  std::vector<std::string> inputs;   // graph inputs in order (may include initializer names)
  std::vector<std::string> outputs;  // graph outputs in order
  std::map<std::string, Tensor> initializers;
  std::map<std::string, ValueType> value_types;  // every value with a known type
  std::map<std::string, int64_t> opsets;         // domain ("" = ONNX) -> version
  const Graph* parent = nullptr;                 // enclosing graph of a subgraph
  // The custom-op schemas of the environment the model was loaded in
  // (onnx/op_schemas.h; NULL: ONNX's schemas only). Subgraphs share it.
  std::shared_ptr<onnxio::OpSchemas> op_schemas;

  // Adds a node and assigns its id.
  Node& add_node(Node node);
  // Removes the nodes with these ids (others keep their ids and order); one
  // pass over the nodes however many are removed.
  void remove_nodes(const std::set<NodeId>& ids);
  const std::vector<std::unique_ptr<Node>>& nodes() const { return nodes_; }
  // The node with this id, or NULL: a hash lookup (callers may ask once per
  // node, so this must not scan). Node ids never change after add_node.
  Node* find_node(NodeId id) const;

  const ValueType* type_of(const std::string& value) const;
  // The initializer named `value` in this graph or an enclosing one, or NULL.
  const Tensor* initializer_in_scope(const std::string& value) const;
  // The same, unless the graph holding it also lists it as an input (a run
  // may override it, as ONNX Runtime lets runs override such initializers):
  // a value whose bytes are fixed for the session, or NULL.
  const Tensor* constant_in_scope(const std::string& value) const;
  bool is_initializer(const std::string& value) const { return initializers.count(value) > 0; }
  bool is_graph_input(const std::string& value) const;
  bool is_graph_output(const std::string& value) const;

  // Node order in which every node comes after the producers of its inputs;
  // INVALID_GRAPH naming a node on a cycle, or a value nobody produces.
  Expected<std::vector<Node*>> topological_order() const;

  // Names used inside nested subgraphs that are not defined there (outer-scope
  // captures), so transformations keep their producers alive.
  std::set<std::string> outer_scope_references() const;

 private:
  std::vector<std::unique_ptr<Node>> nodes_;
  // id -> node, for every node in nodes_ (kept by add_node / remove_nodes).
  std::unordered_map<NodeId, Node*> by_id_;
  NodeId next_id_ = 0;
};

// A tensor value's element type: its recorded type's, else its
// initializer's (in scope); kUndefined for a value of another kind, or one
// nothing tells.
DType tensor_element_type(const Graph& g, const std::string& value);

// Values of an int32 / int64 constant: an initializer of `g` that is not an
// overridable graph input (nullopt for anything else, "" included).
std::optional<std::vector<int64_t>> int_constant(const Graph& g, const std::string& value);

// Records `dtype` as `value`'s element type where nothing is known of it
// yet (no type, or a tensor without element type); never for an
// initializer, never over a known type. True when it did.
bool gain_element_type(Graph& g, const std::string& value, DType dtype);

// The subgraphs in `node`'s attributes (graph and graph-list attributes),
// in attribute order.
std::vector<Graph*> subgraphs_of(const Node& node);

// Outer-scope values the subgraphs in `node`'s attributes read (captures).
std::set<std::string> captured_values(const Node& node);
// Every value `node` reads: its inputs (possibly empty names) then captures.
std::vector<std::string> values_read(const Node& node);

}  // namespace loom::ir
