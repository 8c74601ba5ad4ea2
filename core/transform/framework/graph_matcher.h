// Read-only queries for pattern-matching passes over an ir::Graph: who
// produces and who reads a value, constants, and the small predicates
// fusions are written with. Built once per pass run (its index on first
// use); stale after edits, and not to be queried after any: its index holds
// views of the nodes' names.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/graph.h"

namespace loom::transform {

using ir::int_constant;  // ir/graph.h

class GraphMatcher {
 public:
  explicit GraphMatcher(const ir::Graph& graph);

  const ir::Graph& graph() const { return graph_; }
  const ir::Node* producer(const std::string& value) const;
  // Nodes reading `value` as an input or from a subgraph (each once).
  const std::vector<const ir::Node*>& consumers(const std::string& value) const;
  // The only node reading `value`, when the value is not also a graph output
  // (an intermediate a fusion may swallow).
  const ir::Node* sole_consumer(const std::string& value) const;

  // `n` is `op` in the default domain with the given input/output counts.
  static bool is(const ir::Node& n, const std::string& op, size_t inputs, size_t outputs = 1);
  bool is_float(const std::string& value) const;
  // Values of a float32 constant (an initializer that is not an overridable
  // graph input), or nullopt.
  std::optional<std::vector<float>> float_constant(const std::string& value) const;
  // Whether float_constant would give values, without copying them.
  bool is_float_constant(const std::string& value) const;
  std::optional<Dims> constant_dims(const std::string& value) const;
  // For a binary `op` node reading `value` and a one-element float constant
  // (second operand; either operand for Add / Mul), the constant's value.
  // The constant's rank may not exceed the value's (the result keeps the
  // value's shape) when the value's rank is known; else it must be <= 1.
  std::optional<float> scalar_operand(const ir::Node& n, const std::string& op, const std::string& value) const;
  bool op_with_scalar(const ir::Node& n, const std::string& op, const std::string& value, double want) const;
  // For a binary `op` node reading `value`, the other operand when it is a
  // float constant of shape [c] (c = value's known last dim), or "".
  std::string vector_operand(const ir::Node& n, const std::string& op, const std::string& value) const;
  // When `x` = Add(input, bias) with bias a float constant [C] over x's
  // last dim, read only by nodes in `pattern` (and not a graph output):
  // that Add, its non-bias input and the bias. For fusions that take a
  // bias input (BiasGelu, FastGelu).
  struct BiasAdd {
    const ir::Node* add = nullptr;
    std::string input, bias;
  };
  std::optional<BiasAdd> bias_add(const std::string& x, const std::set<ir::NodeId>& pattern) const;
  // Clip's constant bounds (attributes before opset 11, optional
  // one-element constant inputs from 11, initializers or Constant nodes,
  // which the QDQ passes see before constant folding turns them into
  // initializers; absent: -FLT_MAX / FLT_MAX), or nullopt for a bound
  // computed at run time.
  std::optional<std::pair<float, float>> clip_bounds(const ir::Node& clip) const;
  // The value's last dim when its type and that dim are known, else -1.
  int64_t last_dim(const std::string& value) const;
  // ReduceMean over the last axis only, keepdims = 1 (axes as attribute
  // before opset 18, constant input from 18).
  bool is_last_axis_mean(const ir::Node& n) const;

 private:
  // Values of a float Constant node's output (value or value_float).
  std::optional<std::vector<float>> constant_node_floats(const std::string& value) const;

  // Indexes the graph on the first producer / consumers query, so a pass
  // whose matches all fail on the op type alone costs no index.
  void index() const;
  bool is_graph_input(const std::string& value) const;

  const ir::Graph& graph_;
  // Keyed by views of the nodes' own strings (no copy of every name per pass
  // run), and of captured_ for values subgraphs read from outside.
  mutable bool indexed_ = false;
  mutable std::set<std::string> captured_;
  mutable std::unordered_map<std::string_view, const ir::Node*> producer_;
  mutable std::unordered_map<std::string_view, std::vector<const ir::Node*>> consumers_;
  mutable std::unordered_set<std::string_view> graph_inputs_, graph_outputs_;
};

}  // namespace loom::transform
