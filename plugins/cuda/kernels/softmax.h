// Softmax / LogSoftmax launcher (kernels/softmax.cu). Pointers are device
// memory; work is queued on `stream`. Returns the launch error, if any, or
// cudaErrorInvalidValue for a type it lacks.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/reduce_plan.h"

namespace loom::cuda {

// Along each row of `rows`: y = exp(x - max) / sum(exp(x - max)), or
// (log_softmax) x - max - log(sum(exp(x - max))). Computes in float for
// float16. dtype: float, float16, double.
cudaError_t launch_softmax(bool log_softmax, int32_t dtype, const void* x, void* y, const AxisRows& rows,
                           cudaStream_t stream);

}  // namespace loom::cuda
