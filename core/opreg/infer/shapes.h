// The registry's in-process shape inference over Loom's IR: a walk of the
// graph in topological order applying each op's shape rule
// (shape_rules.h). It keeps dim symbols consistent across the whole graph
// ("seq" stays "seq" through Shape -> Gather -> Concat -> Reshape chains,
// dynamic Slices, Gathers, broadcasts and MatMuls), where ONNX's inference
// gives up or invents a fresh "unk__N" symbol per value. Types only ever
// become more precise (ir/type_precision.h), and it never fails.
#pragma once

#include "ir/graph.h"

namespace loom::opreg {

// Returns the number of value types of `graph` and its subgraphs made more
// precise. Subgraphs are inferred before the node that holds them, in the
// scope of what is known of the enclosing graph at that node.
int infer_shapes(ir::Graph& graph);

// True when every node output of `graph` and of its subgraphs is a tensor
// whose element type and rank are known: then ONNX's inference has nothing
// to add that Loom's passes and planner read.
bool every_output_typed(const ir::Graph& graph);

}  // namespace loom::opreg
