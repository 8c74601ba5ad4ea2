// Dead-code elimination: removes nodes none of whose outputs reach a graph
// output (directly, through other nodes, or through subgraph captures), and
// initializers nothing reads.
#include <set>

#include "transform/passes/passes.h"

namespace loom::transform {
namespace {

class DeadCodeElimination : public Pass {
 public:
  std::string name() const override { return "dead_code_elimination"; }
  OptimizationLevel level() const override { return OptimizationLevel::kBasic; }

  Status run(ir::Graph& graph, PassContext&, bool* changed) override {
    LOOM_ASSIGN_OR_RETURN(std::vector<ir::Node*> order, graph.topological_order());
    std::set<std::string> live(graph.outputs.begin(), graph.outputs.end());
    std::set<ir::NodeId> dead;
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const ir::Node& n = **it;
      bool used = false;
      for (const std::string& o : n.outputs) used = used || (!o.empty() && live.count(o));
      if (!used) {
        dead.insert(n.id);
        continue;
      }
      for (const std::string& v : ir::values_read(n)) live.insert(v);
    }
    std::vector<std::string> unused;
    // Looked up per initializer: a model may list every initializer as an input.
    const std::set<std::string> inputs(graph.inputs.begin(), graph.inputs.end());
    for (const auto& [name, t] : graph.initializers)
      if (!live.count(name) && !inputs.count(name)) unused.push_back(name);
    for (const std::string& name : unused) graph.initializers.erase(name);
    if (!dead.empty()) graph.remove_nodes(dead);
    *changed = !dead.empty() || !unused.empty();
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<Pass> make_dead_code_elimination() { return std::make_unique<DeadCodeElimination>(); }

}  // namespace loom::transform
