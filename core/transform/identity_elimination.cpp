// Identity elimination: Identity, and Dropout in inference (no mask output
// used, no training mode), pass their input through unchanged, so consumers
// can read the input directly.
#include <set>

#include "transform/pass.h"

namespace loom::transform {
namespace {

class IdentityElimination : public Pass {
 public:
  std::string name() const override { return "identity_elimination"; }
  OptimizationLevel level() const override { return OptimizationLevel::kBasic; }

  Status run(ir::Graph& graph, PassContext&, bool* changed) override {
    std::set<std::string> captured;  // names read inside subgraphs: renaming them is not safe
    for (const auto& n : graph.nodes())
      for (const std::string& v : ir::captured_values(*n)) captured.insert(v);
    std::set<ir::NodeId> removed;
    for (const auto& np : graph.nodes()) {
      const ir::Node& n = *np;
      if (!passes_through(graph, n)) continue;
      const std::string& x = n.inputs[0];
      const std::string& y = n.outputs[0];
      if (x.empty() || y.empty() || captured.count(x) || captured.count(y)) continue;
      if (graph.is_graph_output(y)) {
        // Keep the output's name: rename x's producer output to y instead.
        if (graph.is_graph_input(x) || graph.is_initializer(x) || graph.is_graph_output(x)) continue;
        rename(graph, x, y, n.id);
      } else {
        rename(graph, y, x, n.id);
      }
      removed.insert(n.id);
    }
    if (!removed.empty()) {
      graph.remove_nodes(removed);
      *changed = true;
    }
    return Status::ok();
  }

 private:
  static bool passes_through(const ir::Graph& graph, const ir::Node& n) {
    if (!n.domain.empty() || n.inputs.empty() || n.outputs.empty()) return false;
    if (n.op_type == "Identity") {
      // Identity of a sequence/optional is fine too; the rename is type-agnostic.
      return n.inputs.size() == 1;
    }
    if (n.op_type != "Dropout") return false;
    if (n.outputs.size() > 1 && !n.outputs[1].empty()) {
      // The mask is consumed or is a graph output: keep the node.
      const std::string& mask = n.outputs[1];
      if (graph.is_graph_output(mask)) return false;
      for (const auto& other : graph.nodes())
        for (const std::string& in : other->inputs)
          if (in == mask) return false;
    }
    if (n.inputs.size() >= 3 && !n.inputs[2].empty()) {
      auto it = graph.initializers.find(n.inputs[2]);  // training_mode must be a constant false
      if (it == graph.initializers.end() || it->second.dtype() != DType::kBool || it->second.element_count() != 1 ||
          *it->second.data_as<bool>())
        return false;
    }
    if (const ir::Attribute* is_test = n.find_attribute("is_test"); is_test && is_test->i == 0 && n.opset < 7)
      return false;
    return true;
  }

  // Replaces every use of `from` by `to` (node inputs and outputs, except in
  // node `skip`).
  static void rename(ir::Graph& graph, const std::string& from, const std::string& to, ir::NodeId skip) {
    for (const auto& n : graph.nodes()) {
      if (n->id == skip) continue;
      for (std::string& in : n->inputs)
        if (in == from) in = to;
      for (std::string& out : n->outputs)
        if (out == from) out = to;
    }
    auto t = graph.value_types.find(from);
    if (t != graph.value_types.end() && !graph.value_types.count(to)) graph.value_types[to] = t->second;
  }
};

}  // namespace

std::unique_ptr<Pass> make_identity_elimination() { return std::make_unique<IdentityElimination>(); }

}  // namespace loom::transform
