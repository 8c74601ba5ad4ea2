// Softmax / LogSoftmax kernels, numerically stable (the row maximum is
// subtracted before exp). Contiguous rows (the last axis, or any axis
// before opset 13) take one block each: a max pass, a sum pass and a write
// pass, each reading the row from global memory. Strided rows (an axis
// other than the last) take one thread each; adjacent threads read
// adjacent elements.
#include "kernels/reduce_device.cuh"
#include "kernels/softmax.h"

namespace loom::cuda {
namespace {

template <class A>
__device__ __forceinline__ A softmax_value(bool log_softmax, A v, A mx, A sum) {
  return log_softmax ? v - mx - dm::log(sum) : dm::exp(v - mx) / sum;
}

template <class T, int Threads>
__global__ void __launch_bounds__(Threads) softmax_rows_kernel(bool log_softmax, const T* x, T* y, int64_t rows,
                                                              int64_t n) {
  using A = red_acc_t<T>;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* in = x + r * n;
    T* out = y + r * n;
    A mx = minus_infinity<A>();
    for (int64_t k = threadIdx.x; k < n; k += Threads) mx = MaxIgnoringNanOp()(mx, load_acc(in, k));
    mx = block_all_reduce<Threads>(mx, MaxIgnoringNanOp());
    A sum = A(0);
    for (int64_t k = threadIdx.x; k < n; k += Threads) sum += dm::exp(load_acc(in, k) - mx);
    sum = block_all_reduce<Threads>(sum, SumOp());
    for (int64_t k = threadIdx.x; k < n; k += Threads)
      out[k] = store_as<T>(softmax_value(log_softmax, load_acc(in, k), mx, sum));
  }
}

template <class T>
__global__ void softmax_strided_kernel(bool log_softmax, const T* x, T* y, AxisRows rows) {
  using A = red_acc_t<T>;
  LOOM_GRID_STRIDE_LOOP(r, rows.rows()) {
    const int64_t base = rows.base(r);
    A mx = minus_infinity<A>();
    for (int64_t k = 0; k < rows.n; ++k) mx = MaxIgnoringNanOp()(mx, load_acc(x, base + k * rows.inner));
    A sum = A(0);
    for (int64_t k = 0; k < rows.n; ++k) sum += dm::exp(load_acc(x, base + k * rows.inner) - mx);
    for (int64_t k = 0; k < rows.n; ++k) {
      const int64_t at = base + k * rows.inner;
      y[at] = store_as<T>(softmax_value(log_softmax, load_acc(x, at), mx, sum));
    }
  }
}

template <class T>
cudaError_t softmax_typed(bool log_softmax, const void* x, void* y, const AxisRows& rows, cudaStream_t s) {
  const int64_t n_rows = rows.rows();
  if (n_rows == 0 || rows.n == 0) return cudaSuccess;
  const T* px = static_cast<const T*>(x);
  T* py = static_cast<T*>(y);
  if (rows.inner != 1) {
    softmax_strided_kernel<T><<<grid_for(n_rows), kBlockThreads, 0, s>>>(log_softmax, px, py, rows);
  } else if (rows.n <= 64) {  // a warp per row
    softmax_rows_kernel<T, 32><<<blocks_for_items(n_rows), 32, 0, s>>>(log_softmax, px, py, n_rows, rows.n);
  } else if (rows.n <= 512) {
    softmax_rows_kernel<T, 128><<<blocks_for_items(n_rows), 128, 0, s>>>(log_softmax, px, py, n_rows, rows.n);
  } else {
    softmax_rows_kernel<T, 256><<<blocks_for_items(n_rows), 256, 0, s>>>(log_softmax, px, py, n_rows, rows.n);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_softmax(bool log_softmax, int32_t dtype, const void* x, void* y, const AxisRows& rows,
                           cudaStream_t stream) {
  switch (dtype) {
    case LOOM_DTYPE_FLOAT: return softmax_typed<float>(log_softmax, x, y, rows, stream);
    case LOOM_DTYPE_FLOAT16: return softmax_typed<__half>(log_softmax, x, y, rows, stream);
    case LOOM_DTYPE_DOUBLE: return softmax_typed<double>(log_softmax, x, y, rows, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace loom::cuda
