// Pooling launchers (kernels/pool.cu): windowed MaxPool / AveragePool /
// LpPool, one thread per output element over a PoolGeometry
// (kernels/conv_index.h), and the global pools, one block per (n, c)
// plane. Pointers are device memory; everything is queued on `stream`.
// Each returns the launch error, or cudaErrorInvalidValue for a type the
// pool lacks. float16 accumulates in float.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/conv_index.h"

namespace loom::cuda {

enum class PoolKind { kMax, kAverage, kLp };

struct PoolParams {
  PoolKind kind = PoolKind::kMax;
  bool count_include_pad = false;  // AveragePool: divide by the taps inside input + pads
  float p = 2.f;                   // LpPool's exponent
};

// y [planes, out...] from x [planes, in...] (g.channels > 0: y
// [N, out..., C] from x [N, in..., C], planes = N * C). kMax: float, float16, double,
// int8, uint8 (a window with no tap inside the input gives the type's
// lowest value); kAverage, kLp: float, float16, double (no tap: 0).
cudaError_t launch_pool(int32_t dtype, const PoolGeometry& g, const PoolParams& p, const void* x, void* y,
                        cudaStream_t stream);

// y[plane] = max / mean / Lp norm of x[plane, 0 .. spatial). float,
// float16, double. spatial 0: lowest / 0 / 0. `channels` > 0: x is
// channels-last [N, spatial, channels] and plane = n * channels + c.
cudaError_t launch_global_pool(int32_t dtype, PoolKind kind, float p, int64_t planes, int64_t spatial, const void* x,
                               void* y, cudaStream_t stream, int64_t channels = 0);

}  // namespace loom::cuda
