// GraphPatch: the one way passes edit a graph. Edits are staged (new nodes,
// removed nodes, rewired inputs, new initializers, redirected uses) and
// applied by commit() only if the graph that would result is well formed:
// every value read is defined exactly once, graph outputs are still
// produced, and there is no cycle. A rejected patch leaves the graph exactly
// as it was, so a rewrite is never half applied.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "ir/graph.h"

namespace loom::transform {

class GraphPatch {
 public:
  // `why` names the rewrite in error messages ("shape_chain_folding at 'n'").
  GraphPatch(ir::Graph& graph, std::string why);

  // A name no value of the graph (or of an earlier staged edit) uses,
  // derived from `hint`.
  std::string fresh_name(const std::string& hint);
  // Stages a new initializer under a fresh name derived from `hint`; returns the name.
  std::string add_initializer(const std::string& hint, Tensor value);
  // Stages a new node (its id is assigned on commit).
  void add_node(ir::Node node);
  // Stages removing a node of the graph.
  void remove_node(ir::NodeId id);
  // Stages setting input `index` of an existing node to `value`.
  void set_input(ir::NodeId id, size_t index, std::string value);
  // Stages replacing every read of `from` by `to` in node inputs (a patch
  // that would need subgraph captures rewritten is rejected). Graph outputs
  // keep their names: a graph output named `from` gets an Identity(to).
  void replace_uses(const std::string& from, const std::string& to);
  // Makes the graph import `domain` (at least at `version`) on commit, for
  // nodes of that domain the patch adds.
  void import_domain(const std::string& domain, int64_t version);
  // Records the static type of a value the patch creates.
  void set_type(const std::string& value, ir::ValueType type);

  bool empty() const;
  // What is staged (for checks before commit).
  const std::vector<ir::Node>& added_nodes() const { return added_; }
  std::vector<ir::NodeId> removed_nodes() const { return {removed_.begin(), removed_.end()}; }
  const std::map<std::string, ir::ValueType>& staged_types() const { return types_; }
  const std::map<std::string, Tensor>& staged_initializers() const { return initializers_; }
  // Validates and applies. On error nothing changed.
  Status commit();

 private:
  ir::Graph& graph_;
  std::string why_;
  std::vector<ir::Node> added_;
  std::set<ir::NodeId> removed_;
  std::map<ir::NodeId, std::map<size_t, std::string>> inputs_set_;
  std::vector<std::pair<std::string, std::string>> replaced_;
  std::map<std::string, Tensor> initializers_;
  std::map<std::string, ir::ValueType> types_;
  std::map<std::string, int64_t> imports_;
  // Names in use: the graph's node outputs (indexed on first use, as views
  // of the nodes' own strings, which outlive the patch) and names handed out.
  std::unordered_set<std::string_view> graph_outputs_;
  std::set<std::string> names_taken_;
  bool names_indexed_ = false;
  // The graph's inputs and outputs, hashed on first use (a graph may have
  // as many as nodes; a patch asks about each value it redirects or reads).
  // Views of the graph's names: passes never change its inputs or outputs.
  bool is_input(const std::string& v);
  bool is_output(const std::string& v);
  void index_inputs_outputs();
  std::unordered_set<std::string_view> input_names_, output_names_;
  bool inputs_outputs_indexed_ = false;
};

}  // namespace loom::transform
