// Evaluates single nodes on host tensors through an EP's kernels, for
// constant folding. Reuses the whole pipeline (partition, plan, execute) on a
// one-node graph, so folding runs exactly the code a run would.
#pragma once

#include "plugin_host/ep_instance.h"
#include "transform/pass.h"

namespace loom::session {

// `ep` must use host memory and outlive the evaluator.
transform::NodeEvaluator make_node_evaluator(plugin_host::EpInstance& ep);

}  // namespace loom::session
