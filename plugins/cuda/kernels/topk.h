// TopK launchers (kernels/topk.cu). Pointers are device memory; work is
// queued on `stream`. Each returns the launch error, if any, or
// cudaErrorInvalidValue for a type it lacks.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/reduce_plan.h"

namespace loom::cuda {

// Rows longer than kTopkBitonicMax are sorted with a segmented radix sort
// over all rows at once, whose element count must fit an int.
bool topk_size_supported(const AxisRows& rows);

// Device scratch launch_topk needs for `rows` of `dtype` (0 when rows fit
// the shared-memory sort). Sets *bytes; returns the error of the query.
cudaError_t topk_scratch_bytes(int32_t dtype, const AxisRows& rows, size_t* bytes);

// The first k elements of each row of `rows` in topk_before order (always
// sorted: NaN first when largest, equal values by lower index) to `values`
// and their positions in the row to `indices` (may be null), both laid out
// as the input with the axis k long. 0 <= k <= rows.n. dtype: float,
// float16, double, int32, int64.
cudaError_t launch_topk(bool largest, int32_t dtype, const void* x, void* values, int64_t* indices,
                        const AxisRows& rows, int64_t k, void* scratch, size_t scratch_bytes, cudaStream_t stream);

}  // namespace loom::cuda
