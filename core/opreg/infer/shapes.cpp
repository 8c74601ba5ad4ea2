#include "opreg/infer/shapes.h"

#include "onnx/op_schemas.h"
#include "opreg/infer/shape_rules.h"
#include "opreg/op_def.h"

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
    add_control_flow_shape_rules(*t);
    add_einsum_shape_rule(*t);
    return t;
  }();
  auto it = table->find({domain, op_type});
  return it == table->end() ? nullptr : it->second;
}

namespace {

// The outputs the op's own inference function gives (a plugin's custom
// op); an error it returns is the node check's to report.
void apply_op_inference(const ir::Graph& g, const ir::Node& n, const OpDef& def, ShapeContext& c) {
  std::vector<ir::ValueType> outputs(n.outputs.size());
  for (ir::ValueType& t : outputs) t.kind = ValueKind::kUnknown;
  if (!def.infer(g, n, &outputs)) return;
  for (size_t j = 0; j < n.outputs.size() && j < outputs.size(); ++j) {
    const ir::ValueType& t = outputs[j];
    if (t.kind != ValueKind::kTensor) continue;
    if (t.has_shape)
      c.set(n.outputs[j], t.dtype, t.dims);
    else if (t.dtype != DType::kUndefined)
      c.set_dtype(n.outputs[j], t.dtype);
  }
}

}  // namespace

int infer_shapes(ir::Graph& graph) {
  auto order = graph.topological_order();
  if (!order) return 0;
  ShapeContext c(graph);
  int bodies = 0;
  for (const ir::Node* n : *order) {
    if (n->outputs.empty()) continue;
    // Bodies first, in the scope of what is known here: control flow
    // takes its outputs' shapes from them.
    type_control_flow_bodies(*n, c);
    for (ir::Graph* body : ir::subgraphs_of(*n)) bodies += infer_shapes(*body);
    if (ShapeRule rule = find_shape_rule(n->domain, n->op_type)) {
      rule(*n, c);
    } else if (const OpDef* def = onnxio::op_def_of(graph, *n); def != nullptr && def->infer) {
      apply_op_inference(graph, *n, *def, c);
    }
  }
  return c.gained() + bodies;
}

bool every_output_typed(const ir::Graph& graph) {
  for (const auto& n : graph.nodes()) {
    for (const std::string& o : n->outputs) {
      if (o.empty()) continue;
      const ir::ValueType* t = graph.type_of(o);
      if (t == nullptr || t->kind != ValueKind::kTensor || t->dtype == DType::kUndefined || !t->has_shape) return false;
    }
    for (const ir::Graph* body : ir::subgraphs_of(*n))
      if (!every_output_typed(*body)) return false;
  }
  return true;
}

}  // namespace loom::opreg
