// Shared declarations of the ai.onnx.ml kernel files (kernels/ml*.cpp).
#pragma once

#include "loom/sdk.h"

namespace loom::reference {

void register_ml_tree_ensemble_kernels(sdk::KernelRegistry& r);  // TreeEnsemble (5)

}  // namespace loom::reference
