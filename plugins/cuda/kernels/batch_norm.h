// BatchNormalization launcher (kernels/batch_norm.cu), inference form
// (InstanceNormalization is the norm family's, kernels/norm.h). Pointers
// are device memory; everything is queued on `stream`. Returns the launch
// error, or cudaErrorInvalidValue for a type it lacks. float16 computes in
// float.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace loom::cuda {

// A per-channel parameter of its own element type (float, float16, double:
// BatchNormalization-15 lets them differ from X's).
struct NormParam {
  const void* data = nullptr;
  int32_t dtype = 0;
};

// Bytes of device scratch launch_batch_norm needs for `channels`.
size_t batch_norm_scratch_bytes(int64_t channels);

// x viewed as [outer, channels, inner] (n elements):
// y = (x - mean[c]) * scale[c] / sqrt(var[c] + epsilon) + bias[c].
// dtype (of x and y): float, float16, double. `scratch` holds
// batch_norm_scratch_bytes(channels) (the per-channel coefficients).
cudaError_t launch_batch_norm(int32_t dtype, const void* x, void* y, int64_t n, int64_t channels, int64_t inner,
                              NormParam scale, NormParam bias, NormParam mean, NormParam var, float epsilon,
                              void* scratch, cudaStream_t stream);

}  // namespace loom::cuda
