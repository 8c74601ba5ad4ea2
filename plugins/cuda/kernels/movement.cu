// Data-movement kernels: grid-stride loops, one thread per output element,
// elements moved as unsigned integers of their size. The index arithmetic
// lives in kernels/movement_index.h (tested on the CPU).
#include "kernels/device_types.cuh"
#include "kernels/movement.h"

namespace loom::cuda {
namespace {

template <class U>
__global__ void strided_copy_kernel(const U* x, StridedMap map, U* y, int64_t n) {
  LOOM_GRID_STRIDE_LOOP(i, n) y[i] = x[map.offset(i)];
}

template <class U>
__global__ void rows_copy_kernel(const U* src, int64_t src_pitch, U* dst, int64_t dst_pitch, int64_t row_length,
                                 int64_t n) {
  LOOM_GRID_STRIDE_LOOP(i, n) {
    const int64_t r = i / row_length;
    const int64_t j = i - r * row_length;
    dst[r * dst_pitch + j] = src[r * src_pitch + j];
  }
}

template <class U>
__global__ void fill_kernel(U value, U* y, int64_t n) {
  LOOM_GRID_STRIDE_LOOP(i, n) y[i] = value;
}

template <class U>
__global__ void tile_kernel(const U* x, TileMap map, U* y, int64_t n) {
  LOOM_GRID_STRIDE_LOOP(i, n) y[i] = x[map.offset(i)];
}

template <class U>
__global__ void pad_kernel(const U* x, PadMap map, U value, U* y, int64_t n) {
  LOOM_GRID_STRIDE_LOOP(i, n) {
    const int64_t off = map.offset(i);
    y[i] = off < 0 ? value : x[off];
  }
}

template <class U, class I>
__global__ void gather_kernel(const U* data, const I* indices, GatherShape shape, U* y, int64_t n) {
  LOOM_GRID_STRIDE_LOOP(i, n) {
    int64_t o, j, k;
    shape.split(i, o, j, k);
    const int64_t w = gather_index(static_cast<int64_t>(indices[j]), shape.dim);
    y[i] = w < 0 ? U(0) : data[(o * shape.dim + w) * shape.inner + k];
  }
}

template <class U, class I>
__global__ void gather_elements_kernel(const U* data, const I* indices, GatherElementsMap map, U* y, int64_t n) {
  LOOM_GRID_STRIDE_LOOP(i, n) {
    const int64_t off = map.offset(i, static_cast<int64_t>(indices[i]));
    y[i] = off < 0 ? U(0) : data[off];
  }
}

template <class U, class I>
__global__ void gather_nd_kernel(const U* data, const I* indices, GatherNdMap map, U* y, int64_t n) {
  LOOM_GRID_STRIDE_LOOP(i, n) {
    const int64_t t = i / map.slice;
    const int64_t j = i - t * map.slice;
    const int64_t off = map.slice_offset(t, indices + t * map.k);
    y[i] = off < 0 ? U(0) : data[off + j];
  }
}

// Calls f(I{}) with I the index type of `dtype` (int32 or int64).
template <class F>
bool dispatch_index(int32_t dtype, F&& f) {
  switch (dtype) {
    case LOOM_DTYPE_INT32: f(int32_t{}); return true;
    case LOOM_DTYPE_INT64: f(int64_t{}); return true;
    default: return false;
  }
}

// Range in T without FMA contraction (the reference adds the rounded
// product).
__device__ __forceinline__ float range_value(float start, int64_t i, float delta) {
  return __fadd_rn(start, __fmul_rn(static_cast<float>(i), delta));
}
__device__ __forceinline__ double range_value(double start, int64_t i, double delta) {
  return __dadd_rn(start, __dmul_rn(static_cast<double>(i), delta));
}
template <class T>
__device__ __forceinline__ T range_value(T start, int64_t i, T delta) {
  return static_cast<T>(start + static_cast<T>(i) * delta);
}

template <class T>
__global__ void range_kernel(T start, T delta, T* y, int64_t n) {
  LOOM_GRID_STRIDE_LOOP(i, n) y[i] = range_value(start, i, delta);
}

}  // namespace

cudaError_t launch_strided_copy(size_t element_bytes, const void* x, const StridedMap& map, void* y, int64_t n,
                                cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  const bool ok = dispatch_by_size(element_bytes, [&](auto u) {
    using U = decltype(u);
    strided_copy_kernel<U><<<grid_for(n), kBlockThreads, 0, stream>>>(static_cast<const U*>(x), map,
                                                                        static_cast<U*>(y), n);
  });
  return ok ? cudaGetLastError() : cudaErrorInvalidValue;
}

cudaError_t launch_rows_copy(size_t element_bytes, const void* src, int64_t src_pitch, void* dst, int64_t dst_pitch,
                             int64_t rows, int64_t row_length, cudaStream_t stream) {
  const int64_t n = rows * row_length;
  if (n <= 0) return cudaSuccess;
  if (rows == 1 || (src_pitch == row_length && dst_pitch == row_length)) {
    if (src == dst) return cudaSuccess;
    return cudaMemcpyAsync(dst, src, static_cast<size_t>(n) * element_bytes, cudaMemcpyDeviceToDevice, stream);
  }
  const bool ok = dispatch_by_size(element_bytes, [&](auto u) {
    using U = decltype(u);
    rows_copy_kernel<U><<<grid_for(n), kBlockThreads, 0, stream>>>(static_cast<const U*>(src), src_pitch,
                                                                     static_cast<U*>(dst), dst_pitch, row_length, n);
  });
  return ok ? cudaGetLastError() : cudaErrorInvalidValue;
}

cudaError_t launch_fill(size_t element_bytes, uint64_t pattern, void* y, int64_t n, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  const bool ok = dispatch_by_size(element_bytes, [&](auto u) {
    using U = decltype(u);
    fill_kernel<U><<<grid_for(n), kBlockThreads, 0, stream>>>(static_cast<U>(pattern), static_cast<U*>(y), n);
  });
  return ok ? cudaGetLastError() : cudaErrorInvalidValue;
}

cudaError_t launch_tile(size_t element_bytes, const void* x, const TileMap& map, void* y, int64_t n,
                        cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  const bool ok = dispatch_by_size(element_bytes, [&](auto u) {
    using U = decltype(u);
    tile_kernel<U><<<grid_for(n), kBlockThreads, 0, stream>>>(static_cast<const U*>(x), map, static_cast<U*>(y), n);
  });
  return ok ? cudaGetLastError() : cudaErrorInvalidValue;
}

cudaError_t launch_pad(size_t element_bytes, const void* x, const PadMap& map, uint64_t pattern, void* y, int64_t n,
                       cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  const bool ok = dispatch_by_size(element_bytes, [&](auto u) {
    using U = decltype(u);
    pad_kernel<U><<<grid_for(n), kBlockThreads, 0, stream>>>(static_cast<const U*>(x), map, static_cast<U>(pattern),
                                                               static_cast<U*>(y), n);
  });
  return ok ? cudaGetLastError() : cudaErrorInvalidValue;
}

// Launches `launch(U{}, I{})` with U the element type of `element_bytes`
// and I the index type of `index_dtype` (int32 / int64).
template <class Launch>
cudaError_t dispatch_gather(size_t element_bytes, int32_t index_dtype, Launch&& launch) {
  bool ok = false;
  dispatch_by_size(element_bytes, [&](auto u) { ok = dispatch_index(index_dtype, [&](auto i) { launch(u, i); }); });
  return ok ? cudaGetLastError() : cudaErrorInvalidValue;
}

cudaError_t launch_gather(size_t element_bytes, const void* data, int32_t index_dtype, const void* indices,
                          const GatherShape& shape, void* y, int64_t n, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  return dispatch_gather(element_bytes, index_dtype, [&](auto u, auto i) {
    using U = decltype(u);
    using I = decltype(i);
    gather_kernel<U, I><<<grid_for(n), kBlockThreads, 0, stream>>>(
        static_cast<const U*>(data), static_cast<const I*>(indices), shape, static_cast<U*>(y), n);
  });
}

cudaError_t launch_gather_elements(size_t element_bytes, const void* data, int32_t index_dtype, const void* indices,
                                   const GatherElementsMap& map, void* y, int64_t n, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  return dispatch_gather(element_bytes, index_dtype, [&](auto u, auto i) {
    using U = decltype(u);
    using I = decltype(i);
    gather_elements_kernel<U, I><<<grid_for(n), kBlockThreads, 0, stream>>>(
        static_cast<const U*>(data), static_cast<const I*>(indices), map, static_cast<U*>(y), n);
  });
}

cudaError_t launch_gather_nd(size_t element_bytes, const void* data, int32_t index_dtype, const void* indices,
                             const GatherNdMap& map, void* y, int64_t n, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  return dispatch_gather(element_bytes, index_dtype, [&](auto u, auto i) {
    using U = decltype(u);
    using I = decltype(i);
    gather_nd_kernel<U, I><<<grid_for(n), kBlockThreads, 0, stream>>>(
        static_cast<const U*>(data), static_cast<const I*>(indices), map, static_cast<U*>(y), n);
  });
}

cudaError_t launch_range(int32_t dtype, const RangeArgs& a, void* y, int64_t n, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  const unsigned grid = grid_for(n);
  switch (dtype) {
    case LOOM_DTYPE_FLOAT:
      range_kernel<float><<<grid, kBlockThreads, 0, stream>>>(static_cast<float>(a.start), static_cast<float>(a.delta),
                                                               static_cast<float*>(y), n);
      break;
    case LOOM_DTYPE_DOUBLE:
      range_kernel<double><<<grid, kBlockThreads, 0, stream>>>(a.start, a.delta, static_cast<double*>(y), n);
      break;
    case LOOM_DTYPE_INT16:
      range_kernel<int16_t><<<grid, kBlockThreads, 0, stream>>>(
          static_cast<int16_t>(a.start_i), static_cast<int16_t>(a.delta_i), static_cast<int16_t*>(y), n);
      break;
    case LOOM_DTYPE_INT32:
      range_kernel<int32_t><<<grid, kBlockThreads, 0, stream>>>(
          static_cast<int32_t>(a.start_i), static_cast<int32_t>(a.delta_i), static_cast<int32_t*>(y), n);
      break;
    case LOOM_DTYPE_INT64:
      range_kernel<int64_t><<<grid, kBlockThreads, 0, stream>>>(a.start_i, a.delta_i, static_cast<int64_t*>(y), n);
      break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace loom::cuda
