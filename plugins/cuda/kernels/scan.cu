// CumSum kernels. Long rows take one block each, scanned in tiles of one
// element per thread (cub::BlockScan) with a running carry; short rows
// take one thread each (a serial loop).
#include <cub/block/block_scan.cuh>

#include "kernels/reduce_device.cuh"
#include "kernels/scan.h"

namespace loom::cuda {
namespace {

constexpr int kScanThreads = 256;

template <class T>
__global__ void cumsum_thread_kernel(bool exclusive, bool reverse, const T* x, T* y, AxisRows rows) {
  using A = red_acc_t<T>;
  LOOM_GRID_STRIDE_LOOP(r, rows.rows()) {
    A acc = A(0);
    for (int64_t j = 0; j < rows.n; ++j) {
      const int64_t at = rows.at(r, reverse ? rows.n - 1 - j : j);
      const A v = load_acc(x, at);
      if (exclusive) {
        y[at] = store_as<T>(acc);
        acc += v;
      } else {
        acc += v;
        y[at] = store_as<T>(acc);
      }
    }
  }
}

template <class T>
__global__ void __launch_bounds__(kScanThreads) cumsum_block_kernel(bool exclusive, bool reverse, const T* x, T* y,
                                                                   AxisRows rows) {
  using A = red_acc_t<T>;
  using Scan = cub::BlockScan<A, kScanThreads>;
  __shared__ typename Scan::TempStorage storage;
  for (int64_t r = blockIdx.x; r < rows.rows(); r += gridDim.x) {
    A carry = A(0);
    for (int64_t tile = 0; tile < rows.n; tile += kScanThreads) {
      const int64_t j = tile + threadIdx.x;
      const bool in_row = j < rows.n;
      const int64_t at = in_row ? rows.at(r, reverse ? rows.n - 1 - j : j) : 0;
      const A v = in_row ? load_acc(x, at) : A(0);
      A before, total;
      Scan(storage).ExclusiveSum(v, before, total);
      if (in_row) y[at] = store_as<T>(exclusive ? carry + before : carry + before + v);
      carry += total;
      __syncthreads();  // storage is reused by the next tile
    }
  }
}

template <class T>
cudaError_t cumsum_typed(bool exclusive, bool reverse, const void* x, void* y, const AxisRows& rows, cudaStream_t s) {
  const int64_t n_rows = rows.rows();
  if (n_rows == 0 || rows.n == 0) return cudaSuccess;
  const T* px = static_cast<const T*>(x);
  T* py = static_cast<T*>(y);
  if (rows.n <= 64)
    cumsum_thread_kernel<T><<<grid_for(n_rows), kBlockThreads, 0, s>>>(exclusive, reverse, px, py, rows);
  else
    cumsum_block_kernel<T><<<blocks_for_items(n_rows), kScanThreads, 0, s>>>(exclusive, reverse, px, py, rows);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_cumsum(bool exclusive, bool reverse, int32_t dtype, const void* x, void* y, const AxisRows& rows,
                          cudaStream_t stream) {
  switch (dtype) {
    case LOOM_DTYPE_FLOAT: return cumsum_typed<float>(exclusive, reverse, x, y, rows, stream);
    case LOOM_DTYPE_FLOAT16: return cumsum_typed<__half>(exclusive, reverse, x, y, rows, stream);
    case LOOM_DTYPE_DOUBLE: return cumsum_typed<double>(exclusive, reverse, x, y, rows, stream);
    case LOOM_DTYPE_INT32: return cumsum_typed<int32_t>(exclusive, reverse, x, y, rows, stream);
    case LOOM_DTYPE_INT64: return cumsum_typed<int64_t>(exclusive, reverse, x, y, rows, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace loom::cuda
