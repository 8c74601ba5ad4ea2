// In-process element-type inference over Loom's IR, from the op
// definitions nodes are bound to (op_def.h): the first part of the
// registry's own type-and-shape inference, which is to replace the round
// trip to ONNX's inference in a helper process (opreg/onnx_inference/isolated_inference.h).
//
// For each node in topological order (subgraphs' nodes too), each output's
// element type comes from its formal: a literal type ("tensor(int64)"), a
// type parameter that allows one type, or a type parameter an input of a
// known, allowed type binds; ops whose output type an attribute picks
// (Cast's `to`, Constant's value, ...) read that attribute. What cannot be
// told stays unknown: the function only adds, never changes a type, and
// never fails (a node whose inputs contradict its definition is left to the
// node checks and to the kernels at run time).
#pragma once

#include "ir/graph.h"

namespace loom::opreg {

// Returns how many value types gained an element type (all graphs).
int infer_element_types(ir::Graph& graph);

}  // namespace loom::opreg
