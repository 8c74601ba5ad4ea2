// The reference EP's kernel families. Each family lives in
// kernels/<family>.cpp and registers its kernels into the EP's table.
#pragma once

#include "loom/sdk.h"

namespace loom::reference {

void register_elementwise_kernels(sdk::KernelRegistry& r);  // unary, binary, variadic, Cast, Where, Clip
void register_tensor_kernels(sdk::KernelRegistry& r);       // shape / data movement
void register_reduction_kernels(sdk::KernelRegistry& r);    // reductions, softmax, norms, TopK, CumSum
void register_nn_kernels(sdk::KernelRegistry& r);           // Conv, pooling, MatMul, Gemm, quantization

}  // namespace loom::reference
