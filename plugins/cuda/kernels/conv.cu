// The convolution family's own device code: the window copy and the
// bias / residual / activation epilogue, grid-stride loops with one thread
// per output element. float16 computes in float.
#include "kernels/conv.h"
#include "kernels/device_types.cuh"

namespace loom::cuda {
namespace {

template <class U>
__global__ void window_copy_kernel(WindowCopy copy, const U* x, U* y, int64_t n) {
  LOOM_GRID_STRIDE_LOOP(i, n) {
    const int64_t src = copy.source(i);
    y[i] = src < 0 ? U(0) : x[src];
  }
}

__device__ __forceinline__ float activate(const ConvEpilogue& e, float v) {
  switch (e.activation) {
    case ConvActivation::kIdentity:
      return v;
    case ConvActivation::kRelu:
      return v > 0.f ? v : 0.f;
    case ConvActivation::kTanh:
      return tanhf(v);
    case ConvActivation::kSigmoid:
      return 1.f / (1.f + expf(-v));
    case ConvActivation::kSilu:
      return v / (1.f + expf(-v));
    case ConvActivation::kLeakyRelu:
      return v >= 0.f ? v : e.alpha * v;
    case ConvActivation::kClip:
      return fminf(fmaxf(v, e.alpha), e.beta);
    case ConvActivation::kHardSigmoid:
      return fmaxf(0.f, fminf(1.f, e.alpha * v + e.beta));
  }
  return v;
}

template <class T>
__global__ void epilogue_kernel(ConvEpilogue e, T* y, const T* bias, const T* z, int64_t channels, int64_t spatial,
                                int64_t n) {
  LOOM_GRID_STRIDE_LOOP(i, n) {
    float v = to_acc(y[i]);
    if (bias != nullptr) v += to_acc(bias[(i / spatial) % channels]);
    if (z != nullptr) v += to_acc(z[i]);
    y[i] = from_acc<T>(activate(e, v));
  }
}

}  // namespace

cudaError_t launch_window_copy(size_t element_bytes, const WindowCopy& copy, const void* x, void* y, int64_t n,
                               cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  cudaError_t e = cudaErrorInvalidValue;
  dispatch_by_size(element_bytes, [&](auto tag) {
    using U = decltype(tag);
    window_copy_kernel<U><<<grid_for(n), kBlockThreads, 0, s>>>(copy, static_cast<const U*>(x), static_cast<U*>(y), n);
    e = cudaGetLastError();
  });
  return e;
}

cudaError_t launch_conv_epilogue(int32_t dtype, const ConvEpilogue& ep, void* y, const void* bias, const void* z,
                                 int64_t channels, int64_t spatial, int64_t n, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  if (channels <= 0 || spatial <= 0) return cudaErrorInvalidValue;
  switch (dtype) {
    case LOOM_DTYPE_FLOAT:
      epilogue_kernel<float><<<grid_for(n), kBlockThreads, 0, s>>>(ep, static_cast<float*>(y),
                                                                   static_cast<const float*>(bias),
                                                                   static_cast<const float*>(z), channels, spatial, n);
      return cudaGetLastError();
    case LOOM_DTYPE_FLOAT16:
      epilogue_kernel<__half>
          <<<grid_for(n), kBlockThreads, 0, s>>>(ep, static_cast<__half*>(y), static_cast<const __half*>(bias),
                                                 static_cast<const __half*>(z), channels, spatial, n);
      return cudaGetLastError();
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace loom::cuda
