// Element-wise CUDA kernels (kernels/elementwise.cu) and their registration.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "loom/sdk.h"

namespace loom::cuda {

// Launches on `stream`; n may be 0. Returns the launch error, if any.
cudaError_t launch_relu(const float* x, float* y, int64_t n, cudaStream_t stream);
cudaError_t launch_add(const float* a, const float* b, float* y, int64_t n, cudaStream_t stream);
cudaError_t launch_mul(const float* a, const float* b, float* y, int64_t n, cudaStream_t stream);

void register_elementwise_kernels(sdk::KernelRegistry& r);
// Whether the CUDA kernel serves this node (claims check shapes the kernel
// table cannot express: equal shapes for the binary ops).
bool elementwise_supports(const sdk::Node& node);

}  // namespace loom::cuda
