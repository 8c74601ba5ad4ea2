// Device helpers of the matrix-product ops (kernels/matmul.cu); the products
// themselves run on cuBLAS (kernels/gemm_blas.h). Pointers are device
// memory; work is queued on `stream`; n may be 0. Each returns the launch
// error, or cudaErrorInvalidValue for a type it lacks.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/index_math.h"

namespace loom::cuda {

// y[i] = scale * x[map.offset(i)] for i < n (Gemm's C broadcast into Y, and
// Y = beta * C when K is 0). dtype: float, float16, double; float16
// scales in float.
cudaError_t launch_broadcast_scale(int32_t dtype, const void* x, const StridedMap& map, double scale, void* y,
                                   int64_t n, cudaStream_t stream);

}  // namespace loom::cuda
