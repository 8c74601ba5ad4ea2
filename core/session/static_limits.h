// limits.max_tensor_mb applied to what the model's static types already
// say, at session creation: a node whose output shape is fully known and
// over the limit (a Conv padded to a huge output, a Resize by 1e4) is
// refused before any EP compiles, plans or allocates for it. Values whose
// shapes are only known at run time are checked when they are allocated.
#pragma once

#include <cstdint>
#include <string>

#include "ir/graph.h"
#include "loom/status.h"

namespace loom::session {

// Every node output of `graph` and of its subgraphs whose static type has
// all dims known takes at most `max_tensor_bytes` (> 0; 0 checks nothing).
// The error names the value, its type and the node that makes it.
Status check_static_tensor_sizes(const ir::Graph& graph, int64_t max_tensor_bytes);

}  // namespace loom::session
