// Gemm's C broadcast: one thread per output element.
#include "kernels/device_types.cuh"
#include "kernels/matmul.h"

namespace loom::cuda {
namespace {

template <class T>
__global__ void broadcast_scale_kernel(const T* x, StridedMap map, typename Acc<T>::type scale, T* y, int64_t n) {
  LOOM_GRID_STRIDE_LOOP(i, n) y[i] = from_acc<T>(scale * to_acc(x[map.offset(i)]));
}

}  // namespace

cudaError_t launch_broadcast_scale(int32_t dtype, const void* x, const StridedMap& map, double scale, void* y,
                                   int64_t n, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  cudaError_t e = cudaErrorInvalidValue;
  dispatch_float(dtype, [&](auto tag) {
    using T = decltype(tag);
    using A = typename Acc<T>::type;
    broadcast_scale_kernel<T><<<grid_for(n), kBlockThreads, 0, s>>>(static_cast<const T*>(x), map,
                                                                    static_cast<A>(scale), static_cast<T*>(y), n);
    e = cudaGetLastError();
  });
  return e;
}

}  // namespace loom::cuda
