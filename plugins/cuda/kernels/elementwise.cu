// Element-wise kernels: one thread per element, grid-stride loops.
#include "kernels/elementwise.h"

namespace loom::cuda {
namespace {

constexpr int kThreads = 256;

int blocks_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<int>(b < 65535 * 32 ? b : 65535 * 32);
}

__global__ void relu_kernel(const float* x, float* y, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    y[i] = x[i] > 0.f ? x[i] : 0.f;
}

template <bool kMul>
__global__ void binary_kernel(const float* a, const float* b, float* y, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    y[i] = kMul ? a[i] * b[i] : a[i] + b[i];
}

}  // namespace

cudaError_t launch_relu(const float* x, float* y, int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  relu_kernel<<<blocks_for(n), kThreads, 0, stream>>>(x, y, n);
  return cudaGetLastError();
}

cudaError_t launch_add(const float* a, const float* b, float* y, int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  binary_kernel<false><<<blocks_for(n), kThreads, 0, stream>>>(a, b, y, n);
  return cudaGetLastError();
}

cudaError_t launch_mul(const float* a, const float* b, float* y, int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  binary_kernel<true><<<blocks_for(n), kThreads, 0, stream>>>(a, b, y, n);
  return cudaGetLastError();
}

}  // namespace loom::cuda
