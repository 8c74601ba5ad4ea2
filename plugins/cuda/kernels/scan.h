// CumSum launcher (kernels/scan.cu). Pointers are device memory; work is
// queued on `stream`. Returns the launch error, if any, or
// cudaErrorInvalidValue for a type it lacks.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/reduce_plan.h"

namespace loom::cuda {

// Running sums along each row of `rows`: y[k] = x[0] + ... + x[k]
// (exclusive: up to x[k-1], y[0] = 0), from the row's end when `reverse`.
// Accumulates in float for float / float16, double for double, int64 for
// int32 / int64. dtype: float, float16, double, int32, int64.
cudaError_t launch_cumsum(bool exclusive, bool reverse, int32_t dtype, const void* x, void* y, const AxisRows& rows,
                          cudaStream_t stream);

}  // namespace loom::cuda
