#include "exec/partition_fallback.h"

namespace loom::exec {

std::shared_ptr<PartitionFallback> make_partition_fallback(const ir::Graph& graph,
                                                           const std::vector<const ir::Node*>& nodes,
                                                           const std::vector<std::string>& inputs,
                                                           const std::vector<std::string>& outputs,
                                                           FallbackPlanner planner) {
  auto g = std::make_shared<ir::Graph>();
  g->name = graph.name + " partition at " + nodes.front()->label();
  g->opsets = graph.opsets;
  g->op_schemas = graph.op_schemas;
  g->inputs = inputs;
  g->outputs = outputs;
  for (const ir::Node* n : nodes) {
    for (const ir::Attribute& a : n->attributes)
      if (a.graph || !a.graphs.empty()) return nullptr;
    for (const auto* values : {&n->inputs, &n->outputs})
      for (const std::string& v : *values)
        if (const ir::ValueType* t = graph.type_of(v)) g->value_types[v] = *t;
    g->add_node(*n);
  }
  return std::make_shared<PartitionFallback>(std::move(g), std::move(planner));
}

}  // namespace loom::exec
