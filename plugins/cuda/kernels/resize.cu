// Resize kernels: one thread per tap-table entry computes that axis
// coordinate's taps (kernels/resize_index.h, the reference EP's arithmetic);
// then one thread per output element reads its taps along every axis and
// copies (nearest) or sums the cartesian product of the taps in double,
// in the reference's order.
#include "kernels/device_types.cuh"
#include "kernels/movement.h"

namespace loom::cuda {
namespace {

__global__ void resize_taps_kernel(ResizeAttrs attrs, ResizeGeometry g, ResizeTap* taps, int64_t n) {
  LOOM_GRID_STRIDE_LOOP(i, n) taps[i] = g.tap(attrs, i);
}

// The taps of output element i along each axis; false when one of them is
// outside the input (tf_crop_and_resize).
__device__ __forceinline__ bool element_taps(const ResizeGeometry& g, const ResizeTap* taps, int64_t i,
                                             const ResizeTap** out) {
  bool inside = true;
  for (int d = g.rank - 1; d >= 0; --d) {
    const int64_t q = i / g.out_dims[d];
    const int64_t x = i - q * g.out_dims[d];
    out[d] = taps + g.tap_offset[d] + x;
    if (out[d]->outside) inside = false;
    i = q;
  }
  return inside;
}

template <class U>
__global__ void resize_nearest_kernel(ResizeGeometry g, const ResizeTap* taps, const U* x, U fill, U* y, int64_t n) {
  LOOM_GRID_STRIDE_LOOP(i, n) {
    const ResizeTap* t[kMaxRank];
    if (!element_taps(g, taps, i, t)) {
      y[i] = fill;
      continue;
    }
    int64_t off = 0;
    for (int d = 0; d < g.rank; ++d) off += t[d]->index[0] * g.in_strides[d];
    y[i] = x[off];
  }
}

template <class T>
__device__ __forceinline__ double load_double(const T* x, int64_t off) {
  return static_cast<double>(to_acc(x[off]));
}

// The reference's conversions: double -> float -> T for float16.
template <class T>
__device__ __forceinline__ T store_double(double v);
template <>
__device__ __forceinline__ float store_double<float>(double v) { return __double2float_rn(v); }
template <>
__device__ __forceinline__ double store_double<double>(double v) { return v; }
template <>
__device__ __forceinline__ __half store_double<__half>(double v) { return __float2half_rn(__double2float_rn(v)); }

template <class T>
__device__ __forceinline__ T from_float(float v) { return static_cast<T>(v); }
template <>
__device__ __forceinline__ __half from_float<__half>(float v) { return __float2half_rn(v); }

template <class T>
__global__ void resize_interpolate_kernel(ResizeGeometry g, const ResizeTap* taps, const T* x, float extrapolation,
                                          T* y, int64_t n) {
  LOOM_GRID_STRIDE_LOOP(i, n) {
    const ResizeTap* t[kMaxRank];
    if (!element_taps(g, taps, i, t)) {
      y[i] = from_float<T>(extrapolation);
      continue;
    }
    int k[kMaxRank];
    for (int d = 0; d < g.rank; ++d) k[d] = 0;
    double acc = 0.0;
    while (true) {
      double w = 1.0;
      int64_t off = 0;
      for (int d = 0; d < g.rank; ++d) {
        w = __dmul_rn(w, t[d]->weight[k[d]]);
        off += t[d]->index[k[d]] * g.in_strides[d];
      }
      acc = __dadd_rn(acc, __dmul_rn(w, load_double(x, off)));
      int d = g.rank - 1;
      for (; d >= 0; --d) {
        if (++k[d] < t[d]->count) break;
        k[d] = 0;
      }
      if (d < 0) break;
    }
    y[i] = store_double<T>(acc);
  }
}

}  // namespace

cudaError_t launch_resize_taps(const ResizeAttrs& attrs, const ResizeGeometry& geometry, ResizeTap* taps,
                               int64_t tap_count, cudaStream_t stream) {
  if (tap_count <= 0) return cudaSuccess;
  resize_taps_kernel<<<grid_for(tap_count), kBlockThreads, 0, stream>>>(attrs, geometry, taps, tap_count);
  return cudaGetLastError();
}

cudaError_t launch_resize_nearest(size_t element_bytes, const ResizeGeometry& geometry, const ResizeTap* taps,
                                  const void* x, uint64_t pattern, void* y, int64_t n, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  const bool ok = dispatch_by_size(element_bytes, [&](auto u) {
    using U = decltype(u);
    resize_nearest_kernel<U><<<grid_for(n), kBlockThreads, 0, stream>>>(
        geometry, taps, static_cast<const U*>(x), static_cast<U>(pattern), static_cast<U*>(y), n);
  });
  return ok ? cudaGetLastError() : cudaErrorInvalidValue;
}

cudaError_t launch_resize_interpolate(int32_t dtype, const ResizeGeometry& geometry, const ResizeTap* taps,
                                      const void* x, float extrapolation, void* y, int64_t n, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  const bool ok = dispatch_float(dtype, [&](auto v) {
    using T = decltype(v);
    resize_interpolate_kernel<T><<<grid_for(n), kBlockThreads, 0, stream>>>(
        geometry, taps, static_cast<const T*>(x), extrapolation, static_cast<T*>(y), n);
  });
  return ok ? cudaGetLastError() : cudaErrorInvalidValue;
}

}  // namespace loom::cuda
