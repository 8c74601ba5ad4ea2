// Device-side element types: which C++ type holds each LOOM_DTYPE on the
// GPU, how half precision converts (arithmetic on __half goes through
// float), and the grid-stride launch shape every element-wise kernel uses.
// Included by .cu files only.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "loom/abi/base.h"

namespace loom::cuda {

constexpr int kBlockThreads = 256;

// Blocks for n elements, one per thread, capped (grid-stride loops cover
// the rest): at least 1.
inline unsigned grid_for(int64_t n) {
  const int64_t blocks = (n + kBlockThreads - 1) / kBlockThreads;
  const int64_t cap = 65535LL * 16;
  return static_cast<unsigned>(blocks < 1 ? 1 : blocks > cap ? cap : blocks);
}

#define LOOM_GRID_STRIDE_LOOP(i, n)                                                     \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)

// Arithmetic type of T: float for __half, T itself otherwise.
template <class T> struct Acc { using type = T; };
template <> struct Acc<__half> { using type = float; };

template <class T>
__device__ __forceinline__ typename Acc<T>::type to_acc(T v) { return static_cast<typename Acc<T>::type>(v); }
template <>
__device__ __forceinline__ float to_acc<__half>(__half v) { return __half2float(v); }

template <class T>
__device__ __forceinline__ T from_acc(typename Acc<T>::type v) { return static_cast<T>(v); }
template <>
__device__ __forceinline__ __half from_acc<__half>(float v) { return __float2half(v); }

// Calls f(T{}) with T the device type of `dtype` among the float types
// (float, __half, double); returns false for any other type.
template <class F>
bool dispatch_float(int32_t dtype, F&& f) {
  switch (dtype) {
    case LOOM_DTYPE_FLOAT: f(float{}); return true;
    case LOOM_DTYPE_FLOAT16: f(__half{}); return true;
    case LOOM_DTYPE_DOUBLE: f(double{}); return true;
    default: return false;
  }
}

// The same over the numeric types (float types and the integers).
template <class F>
bool dispatch_numeric(int32_t dtype, F&& f) {
  switch (dtype) {
    case LOOM_DTYPE_INT32: f(int32_t{}); return true;
    case LOOM_DTYPE_INT64: f(int64_t{}); return true;
    case LOOM_DTYPE_INT8: f(int8_t{}); return true;
    case LOOM_DTYPE_UINT8: f(uint8_t{}); return true;
    default: return dispatch_float(dtype, f);
  }
}

// The same over every fixed-size type, by size only (for data movement,
// which copies elements without reading them): f(U{}) with U an unsigned
// integer of the element's size.
template <class F>
bool dispatch_by_size(size_t element_bytes, F&& f) {
  switch (element_bytes) {
    case 1: f(uint8_t{}); return true;
    case 2: f(uint16_t{}); return true;
    case 4: f(uint32_t{}); return true;
    case 8: f(uint64_t{}); return true;
    default: return false;
  }
}

}  // namespace loom::cuda
