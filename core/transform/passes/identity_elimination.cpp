// Identity elimination: Identity, and Dropout in inference (no mask output
// used, no training mode), pass their input through unchanged, so consumers
// can read the input directly.
//
// Nodes are visited in graph order and each removal renames a value
// everywhere else in the graph, which later decisions see. The renames are
// recorded in a union-find over value names rather than applied to every
// node at once (that was quadratic on chains of Identity nodes); the nodes'
// names are rewritten once at the end. Linear in the graph's size (up to
// the union-find's inverse-Ackermann factor).
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "transform/passes/passes.h"

namespace loom::transform {
namespace {

// Value names as the pass renames them. Every name a node's input or output
// has is an element; rename(from, to) merges from's set into to's. Invariant:
// the roots' labels are distinct, and every slot of a node still in the graph
// (or pending removal) whose name resolves to a root is spelt as that root's
// label in the eagerly renamed graph the pass used to build.
class ValueNames {
 public:
  explicit ValueNames(const ir::Graph& graph) {
    for (const auto& n : graph.nodes()) {
      for (const std::string& in : n->inputs)
        if (!in.empty()) ++readers_[element(in)];
      for (const std::string& out : n->outputs)
        if (!out.empty()) element(out);
    }
  }

  // The name `original` (a name some node slot had when the pass started)
  // has now.
  const std::string& current(const std::string& original) {
    if (original.empty()) return original;
    return label_[find(index_.at(original))];
  }
  // How many node inputs read the value now named like `original`.
  size_t readers(const std::string& original) { return readers_[find(index_.at(original))]; }

  // Every slot named `from` is named `to` from now on, except the `skipped_reads`
  // inputs of the node doing the rename (which the pass then removes).
  void rename(const std::string& from, const std::string& to, size_t skipped_reads) {
    const size_t a = find(index_.at(from)), b = find(index_.at(to));
    if (a == b) return;
    const size_t keep = size_[a] > size_[b] ? a : b, gone = keep == a ? b : a;
    parent_[gone] = keep;
    size_[keep] += size_[gone];
    readers_[keep] = readers_[a] + readers_[b] - skipped_reads;
    label_[keep] = label_[b];
  }

 private:
  size_t element(const std::string& name) {
    auto [it, inserted] = index_.emplace(name, label_.size());
    if (inserted) {
      label_.push_back(name);
      parent_.push_back(label_.size() - 1);
      size_.push_back(1);
      readers_.push_back(0);
    }
    return it->second;
  }
  size_t find(size_t e) {
    size_t root = e;
    while (parent_[root] != root) root = parent_[root];
    while (parent_[e] != root) e = std::exchange(parent_[e], root);
    return root;
  }

  std::unordered_map<std::string, size_t> index_;  // original name -> element
  std::vector<std::string> label_;                 // per root: the name its slots have
  std::vector<size_t> parent_, size_, readers_;
};

class IdentityElimination : public Pass {
 public:
  std::string name() const override { return "identity_elimination"; }
  OptimizationLevel level() const override { return OptimizationLevel::kBasic; }

  Status run(ir::Graph& graph, PassContext&, bool* changed) override {
    // Most graphs have none: then there is nothing to index.
    bool candidates = false;
    for (const auto& n : graph.nodes())
      candidates = candidates || (n->domain.empty() && (n->op_type == "Identity" || n->op_type == "Dropout"));
    if (!candidates) return Status::ok();
    std::set<std::string> captured;  // names read inside subgraphs: renaming them is not safe
    for (const auto& n : graph.nodes())
      for (const std::string& v : ir::captured_values(*n)) captured.insert(v);
    const std::unordered_set<std::string> graph_inputs(graph.inputs.begin(), graph.inputs.end());
    const std::unordered_set<std::string> graph_outputs(graph.outputs.begin(), graph.outputs.end());
    ValueNames names(graph);
    std::set<ir::NodeId> removed;
    for (const auto& np : graph.nodes()) {
      const ir::Node& n = *np;
      if (!passes_through(graph, n, names, graph_outputs)) continue;
      const std::string x = names.current(n.inputs[0]);
      const std::string y = names.current(n.outputs[0]);
      if (x.empty() || y.empty() || captured.count(x) || captured.count(y)) continue;
      if (graph_outputs.count(y)) {
        // Keep the output's name: rename x's producer output to y instead.
        if (graph_inputs.count(x) || graph.is_initializer(x) || graph_outputs.count(x)) continue;
        rename(graph, names, n, x, y);
      } else {
        rename(graph, names, n, y, x);
      }
      removed.insert(n.id);
    }
    if (!removed.empty()) {
      for (const auto& n : graph.nodes()) {
        if (removed.count(n->id)) continue;
        for (std::string& in : n->inputs) in = names.current(in);
        for (std::string& out : n->outputs) out = names.current(out);
      }
      graph.remove_nodes(removed);
      *changed = true;
    }
    return Status::ok();
  }

 private:
  static bool passes_through(const ir::Graph& graph, const ir::Node& n, ValueNames& names,
                             const std::unordered_set<std::string>& graph_outputs) {
    if (!n.domain.empty() || n.inputs.empty() || n.outputs.empty()) return false;
    if (n.op_type == "Identity") {
      // Identity of a sequence/optional is fine too; the rename is type-agnostic.
      return n.inputs.size() == 1;
    }
    if (n.op_type != "Dropout") return false;
    if (n.outputs.size() > 1 && !n.outputs[1].empty()) {
      // The mask is consumed or is a graph output: keep the node.
      if (graph_outputs.count(names.current(n.outputs[1])) || names.readers(n.outputs[1]) > 0) return false;
    }
    if (n.inputs.size() >= 3 && !n.inputs[2].empty()) {
      // training_mode must be a constant false
      auto it = graph.initializers.find(names.current(n.inputs[2]));
      if (it == graph.initializers.end() || it->second.dtype() != DType::kBool || it->second.element_count() != 1 ||
          *it->second.data_as<bool>())
        return false;
    }
    if (const ir::Attribute* is_test = n.find_attribute("is_test"); is_test && is_test->i == 0 && n.opset < 7)
      return false;
    return true;
  }

  // Replaces every use of `from` by `to` (node inputs and outputs, except in
  // `node`, which is then removed).
  static void rename(ir::Graph& graph, ValueNames& names, const ir::Node& node, const std::string& from,
                     const std::string& to) {
    size_t skipped_reads = 0;
    for (const std::string& in : node.inputs) skipped_reads += !in.empty() && names.current(in) == from;
    names.rename(from, to, skipped_reads);
    auto t = graph.value_types.find(from);
    if (t != graph.value_types.end() && !graph.value_types.count(to)) graph.value_types[to] = t->second;
  }
};

}  // namespace

std::unique_ptr<Pass> make_identity_elimination() { return std::make_unique<IdentityElimination>(); }

}  // namespace loom::transform
