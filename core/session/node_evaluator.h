// Evaluates single nodes on host tensors through an EP's kernels, for
// constant folding. Reuses the whole pipeline (partition, plan, execute) on a
// one-node graph, so folding runs exactly the code a run would.
#pragma once

#include "plugin_host/ep_instance.h"
#include "transform/framework/pass.h"

namespace loom::session {

// `ep` must use host memory and outlive the evaluator.
// `max_tensor_bytes` > 0 (config limits.max_tensor_mb) bounds what a folded
// node may produce: a hostile model cannot make folding allocate more.
transform::NodeEvaluator make_node_evaluator(plugin_host::EpInstance& ep, int64_t max_tensor_bytes = 0);

}  // namespace loom::session
