// Symbolic shape propagation: Loom's own pass over the graph in topological
// order that keeps dim symbols consistent across the whole graph ("seq"
// stays "seq" through Shape -> Gather -> Concat -> Reshape chains, dynamic
// Slices, Gathers, broadcasts and MatMuls), where ONNX's inference gives up
// or invents a fresh "unk__N" symbol per value. Small int tensors that hold
// shapes (Shape outputs and what is computed from them) are tracked as
// lists of dims, so a Reshape or Slice reading them gets exact symbolic
// dims. Types only ever become more precise (see type_precision.h).
#pragma once

#include "ir/graph.h"

namespace loom::transform {

// Returns the number of value types of `graph` (top level) made more precise.
int propagate_symbolic_shapes(ir::Graph& graph);

}  // namespace loom::transform
