// Reduction launchers (kernels/reduce.cu): the ReduceX ops over any set of
// axes (planned on the host as ReduceMaps) and ArgMax / ArgMin along one
// axis. Pointers are device memory; everything is queued on `stream`. Each
// returns the launch error, if any, or cudaErrorInvalidValue for a type the
// op lacks.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/reduce_plan.h"

namespace loom::cuda {

enum class ReduceOp : int { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kSumSquare, kLogSum, kLogSumExp };

// Whether the op runs on integer tensors here (the others need a float type).
inline bool reduce_op_takes_integers(ReduceOp op) {
  return op != ReduceOp::kL2 && op != ReduceOp::kLogSum && op != ReduceOp::kLogSumExp;
}

// y[o] = op over the maps.count elements of output o (maps.outputs of
// them). Accumulates in float for float and float16, double for double,
// int64 for int32 / int64. Empty reductions (count 0) give the op's
// identity (Sum 0, Prod 1, Max -inf / lowest, Mean NaN / 0, LogSum -inf).
// Max / Min propagate NaN. dtype: float, float16, double; int32 and int64
// for the ops reduce_op_takes_integers accepts.
cudaError_t launch_reduce(ReduceOp op, int32_t dtype, const void* x, void* y, const ReduceMaps& maps,
                          cudaStream_t stream);

// y[r] = the index in [0, rows.n) of the largest (is_max) or smallest
// element of row r, as int64: a NaN wins over every number; ties (and NaNs)
// go to the first index, or the last with select_last. rows.n >= 1.
// dtype: float, float16, double, int32, int64.
cudaError_t launch_arg_reduce(bool is_max, bool select_last, int32_t dtype, const void* x, int64_t* y,
                              const AxisRows& rows, cudaStream_t stream);

}  // namespace loom::cuda
