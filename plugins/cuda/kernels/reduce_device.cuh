// Device helpers of the reduction family (reduce.cu, softmax.cu, scan.cu,
// topk.cu, norm.cu): accumulator types, loads and stores through them, NaN
// tests that also take integers, and block-wide sums and maxima (CUB).
// Included by .cu files only.
#pragma once

#include <cuda/std/limits>

#include <type_traits>

#include <cub/block/block_reduce.cuh>

#include "kernels/device_math.cuh"
#include "kernels/device_types.cuh"

namespace loom::cuda {

// Accumulator of a reduction over T: float for float16 and float, double
// for double, int64 for the integers.
template <class T> struct RedAcc { using type = T; };
template <> struct RedAcc<__half> { using type = float; };
template <> struct RedAcc<int32_t> { using type = int64_t; };
template <class T> using red_acc_t = typename RedAcc<T>::type;

template <class T> inline constexpr bool kIsFloatish = false;
template <> inline constexpr bool kIsFloatish<float> = true;
template <> inline constexpr bool kIsFloatish<double> = true;
template <> inline constexpr bool kIsFloatish<__half> = true;

template <class T>
__device__ __forceinline__ red_acc_t<T> load_acc(const T* p, int64_t i) {
  if constexpr (std::is_same_v<T, __half>) return __half2float(p[i]);
  else return static_cast<red_acc_t<T>>(p[i]);
}

template <class T, class A>
__device__ __forceinline__ T store_as(A v) {
  if constexpr (std::is_same_v<T, __half>) return __float2half(static_cast<float>(v));
  else return static_cast<T>(v);
}

template <class A>
__device__ __forceinline__ bool is_nan_acc(A v) {
  if constexpr (std::is_floating_point_v<A>) return dm::isnan(v);
  else return false;
}

template <class A>
__device__ __forceinline__ A plus_infinity() {
  if constexpr (std::is_floating_point_v<A>) return ::cuda::std::numeric_limits<A>::infinity();
  else return ::cuda::std::numeric_limits<A>::max();
}

template <class A>
__device__ __forceinline__ A minus_infinity() {
  if constexpr (std::is_floating_point_v<A>) return -::cuda::std::numeric_limits<A>::infinity();
  else return ::cuda::std::numeric_limits<A>::lowest();
}

template <class A>
__device__ __forceinline__ A quiet_nan() {
  return ::cuda::std::numeric_limits<A>::quiet_NaN();
}

struct SumOp {
  template <class A>
  __device__ __forceinline__ A operator()(A a, A b) const { return a + b; }
};

// The larger, NaN ignored unless both are NaN (as std::max(acc, v) from a
// non-NaN start): the max pass of softmax and LogSumExp.
struct MaxIgnoringNanOp {
  template <class A>
  __device__ __forceinline__ A operator()(A a, A b) const {
    if (is_nan_acc(a)) return b;
    if (is_nan_acc(b)) return a;
    return a < b ? b : a;
  }
};

// Block-wide reduction of one value per thread with `op`; every thread of
// the block gets the result. `Threads` is the block size. Ends with a
// barrier, so the shared storage may be reused at once.
template <int Threads, class A, class Op>
__device__ A block_all_reduce(A v, Op op) {
  using Reduce = cub::BlockReduce<A, Threads>;
  __shared__ typename Reduce::TempStorage storage;
  __shared__ A result;
  const A r = Reduce(storage).Reduce(v, op);
  if (threadIdx.x == 0) result = r;
  __syncthreads();
  const A out = result;
  __syncthreads();
  return out;
}

// Blocks for a kernel that takes one block per item (grid-stride over
// the rest), at least 1.
inline unsigned blocks_for_items(int64_t items) {
  const int64_t cap = 1 << 20;
  return static_cast<unsigned>(items < 1 ? 1 : items > cap ? cap : items);
}

}  // namespace loom::cuda
