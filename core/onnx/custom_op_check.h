// Load-time check of a node of a custom-op domain against the schema its
// plugin declared: the op exists at the model's opset for the domain, the
// input/output counts fit the arity, omitted inputs are optional ones,
// attributes are declared, present when required and of the declared type,
// element types are allowed by the type constraints and agree across values
// bound to one type parameter, and the op's own shape inference accepts
// the node. Errors name the node, the op and the plugin.
#pragma once

#include "ir/graph.h"
#include "loom/status.h"
#include "onnx/op_schemas.h"

namespace loom::onnxio {

Status check_custom_node(const ir::Graph& graph, const ir::Node& node, const OpSchemas& schemas);

}  // namespace loom::onnxio
