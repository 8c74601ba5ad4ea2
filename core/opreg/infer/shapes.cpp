#include "opreg/infer/shapes.h"

#include "opreg/infer/shape_rules.h"

namespace loom::opreg {

ShapeRule find_shape_rule(const std::string& domain, const std::string& op_type) {
  static const ShapeRuleTable* const table = [] {
    auto* t = new ShapeRuleTable();  // never destroyed: read by every session
    add_elementwise_shape_rules(*t);
    add_layout_shape_rules(*t);
    add_value_shape_rules(*t);
    add_nn_shape_rules(*t);
    add_spatial_shape_rules(*t);
    add_selection_shape_rules(*t);
    add_generator_shape_rules(*t);
    add_region_shape_rules(*t);
    add_attention_shape_rules(*t);  // after the element-wise rules: LayerNormalization's stats too
    return t;
  }();
  auto it = table->find({domain, op_type});
  return it == table->end() ? nullptr : it->second;
}

int infer_shapes(ir::Graph& graph) {
  auto order = graph.topological_order();
  if (!order) return 0;
  ShapeContext c(graph);
  for (const ir::Node* n : *order) {
    if (n->outputs.empty()) continue;
    if (ShapeRule rule = find_shape_rule(n->domain, n->op_type)) rule(*n, c);
  }
  return c.gained();
}

namespace {

bool has_subgraph(const ir::Node& n) {
  for (const ir::Attribute& a : n.attributes)
    if (a.graph || !a.graphs.empty()) return true;
  return false;
}

}  // namespace

bool every_output_typed(const ir::Graph& graph) {
  for (const auto& n : graph.nodes()) {
    if (has_subgraph(*n)) return false;
    for (const std::string& o : n->outputs) {
      if (o.empty()) continue;
      const ir::ValueType* t = graph.type_of(o);
      if (t == nullptr || t->kind != ValueKind::kTensor || t->dtype == DType::kUndefined || !t->has_shape) return false;
    }
  }
  return true;
}

bool every_node_has_a_shape_rule(const ir::Graph& graph) {
  for (const auto& n : graph.nodes())
    if (has_subgraph(*n) || find_shape_rule(n->domain, n->op_type) == nullptr) return false;
  return true;
}

}  // namespace loom::opreg
