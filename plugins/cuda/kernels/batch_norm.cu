// BatchNormalization: a small kernel turns the four parameter vectors (each
// of its own type) into per-channel coefficients (mean,
// scale / sqrt(var + eps), bias) in X's arithmetic type, then one thread
// per element applies them.
#include "kernels/batch_norm.h"
#include "kernels/device_math.cuh"
#include "kernels/device_types.cuh"

namespace loom::cuda {
namespace {

template <class A>
__device__ __forceinline__ A load_param(const NormParam& p, int64_t i) {
  switch (p.dtype) {
    case LOOM_DTYPE_FLOAT:
      return static_cast<A>(static_cast<const float*>(p.data)[i]);
    case LOOM_DTYPE_FLOAT16:
      return static_cast<A>(__half2float(static_cast<const __half*>(p.data)[i]));
    default:
      return static_cast<A>(static_cast<const double*>(p.data)[i]);
  }
}

template <class A>
__global__ void bn_coefficients_kernel(NormParam scale, NormParam bias, NormParam mean, NormParam var, A epsilon,
                                       A* coef, int64_t channels) {
  LOOM_GRID_STRIDE_LOOP(c, channels) {
    coef[c] = load_param<A>(mean, c);
    coef[channels + c] = load_param<A>(scale, c) / dm::sqrt(load_param<A>(var, c) + epsilon);
    coef[2 * channels + c] = load_param<A>(bias, c);
  }
}

template <class T>
__global__ void bn_kernel(const T* x, T* y, const typename Acc<T>::type* coef, int64_t n, int64_t channels,
                          int64_t inner) {
  LOOM_GRID_STRIDE_LOOP(i, n) {
    const int64_t c = (i / inner) % channels;
    y[i] = from_acc<T>((to_acc(x[i]) - coef[c]) * coef[channels + c] + coef[2 * channels + c]);
  }
}

bool float_type(int32_t dtype) {
  return dtype == LOOM_DTYPE_FLOAT || dtype == LOOM_DTYPE_FLOAT16 || dtype == LOOM_DTYPE_DOUBLE;
}

}  // namespace

size_t batch_norm_scratch_bytes(int64_t channels) { return static_cast<size_t>(channels) * 3 * sizeof(double); }

cudaError_t launch_batch_norm(int32_t dtype, const void* x, void* y, int64_t n, int64_t channels, int64_t inner,
                              NormParam scale, NormParam bias, NormParam mean, NormParam var, float epsilon,
                              void* scratch, cudaStream_t s) {
  for (const NormParam& p : {scale, bias, mean, var})
    if (!float_type(p.dtype)) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  if (channels <= 0 || inner <= 0) return cudaErrorInvalidValue;
  cudaError_t e = cudaErrorInvalidValue;
  dispatch_float(dtype, [&](auto tag) {
    using T = decltype(tag);
    using A = typename Acc<T>::type;
    A* coef = static_cast<A*>(scratch);
    bn_coefficients_kernel<A>
        <<<grid_for(channels), kBlockThreads, 0, s>>>(scale, bias, mean, var, static_cast<A>(epsilon), coef, channels);
    e = cudaGetLastError();
    if (e != cudaSuccess) return;
    bn_kernel<T>
        <<<grid_for(n), kBlockThreads, 0, s>>>(static_cast<const T*>(x), static_cast<T*>(y), coef, n, channels, inner);
    e = cudaGetLastError();
  });
  return e;
}

}  // namespace loom::cuda
