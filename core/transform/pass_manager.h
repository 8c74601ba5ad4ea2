// Runs the passes of every level up to the configured one, to a fixed point,
// logging each pass's time and effect.
#pragma once

#include "transform/pass.h"

namespace loom::transform {

Status optimize(ir::Graph& graph, OptimizationLevel level, PassContext& ctx);

}  // namespace loom::transform
