// Pooling kernels. Windowed pools: one thread per output element visits
// the box of its window's taps that land inside the input (pool_taps);
// MaxPool keeps the first largest value, AveragePool divides by the taps
// inside the input (or inside input + pads with count_include_pad),
// LpPool takes (sum |x|^p)^(1/p). Global pools: a block per (n, c) plane
// with a shared-memory tree reduction.
#include <cfloat>

#include "kernels/device_math.cuh"
#include "kernels/device_types.cuh"
#include "kernels/pool.h"

namespace loom::cuda {
namespace {

// The plane of output element i; its spatial coordinates into o.
__device__ __forceinline__ int64_t output_coords(const PoolGeometry& g, int64_t i, int64_t o[kPoolDims]) {
  for (int d = kPoolDims - 1; d >= 0; --d) {
    o[d] = i % g.out[d];
    i /= g.out[d];
  }
  return i;
}

// Calls f(value) for each tap of output element i's window inside x;
// returns the plane-relative taps (for the counts).
template <class T, class F>
__device__ __forceinline__ void for_each_tap(const PoolGeometry& g, const T* x, int64_t i, PoolTaps t[kPoolDims],
                                             F&& f) {
  int64_t o[kPoolDims];
  // Channels-last: the channel is the fastest index, the "plane" the image.
  const int64_t channel = g.channels > 0 ? i % g.channels : 0;
  const int64_t plane = output_coords(g, g.channels > 0 ? i / g.channels : i, o);
  for (int d = 0; d < kPoolDims; ++d) t[d] = pool_taps(g, d, o[d]);
  const int64_t in_spatial = g.in[0] * g.in[1] * g.in[2];
  const int64_t step = g.channels > 0 ? g.channels : 1;
  const T* xp = g.channels > 0 ? x + plane * in_spatial * g.channels + channel : x + plane * in_spatial;
  for (int64_t a = t[0].lo; a < t[0].hi; ++a) {
    const int64_t i0 = t[0].start + a * g.dilations[0];
    for (int64_t b = t[1].lo; b < t[1].hi; ++b) {
      const int64_t i1 = t[1].start + b * g.dilations[1];
      const int64_t row = (i0 * g.in[1] + i1) * g.in[2];
      for (int64_t c = t[2].lo; c < t[2].hi; ++c) f(xp[(row + t[2].start + c * g.dilations[2]) * step]);
    }
  }
}

template <class T>
__global__ void max_pool_kernel(PoolGeometry g, const T* x, T* y, int64_t n, typename Acc<T>::type lowest) {
  using A = typename Acc<T>::type;
  LOOM_GRID_STRIDE_LOOP(i, n) {
    PoolTaps t[kPoolDims];
    A best = lowest;
    bool any = false;
    for_each_tap(g, x, i, t, [&](T raw) {
      const A v = to_acc(raw);
      if (!any || v > best) {
        best = v;
        any = true;
      }
    });
    y[i] = from_acc<T>(best);
  }
}

template <class T>
__global__ void sum_pool_kernel(PoolGeometry g, PoolParams p, const T* x, T* y, int64_t n) {
  using A = typename Acc<T>::type;
  const A exponent = static_cast<A>(p.p);
  LOOM_GRID_STRIDE_LOOP(i, n) {
    PoolTaps t[kPoolDims];
    A sum = A(0);
    if (p.kind == PoolKind::kLp)
      for_each_tap(g, x, i, t, [&](T raw) { sum += dm::pow(dm::fabs(to_acc(raw)), exponent); });
    else
      for_each_tap(g, x, i, t, [&](T raw) { sum += to_acc(raw); });
    if (p.kind == PoolKind::kLp) {
      y[i] = from_acc<T>(dm::pow(sum, A(1) / exponent));
      continue;
    }
    int64_t count = 1;
    for (int d = 0; d < kPoolDims; ++d) count *= p.count_include_pad ? t[d].padded : t[d].hi - t[d].lo;
    y[i] = from_acc<T>(count > 0 ? sum / static_cast<A>(count) : A(0));
  }
}

// One value into a global pool's accumulator, and the accumulator into the
// result over `count` values (shared by the NCHW and NHWC kernels).
template <class A>
__device__ __forceinline__ A pool_step(PoolKind kind, A acc, A v, A exponent) {
  if (kind == PoolKind::kMax) return v > acc ? v : acc;
  if (kind == PoolKind::kAverage) return acc + v;
  return acc + dm::pow(dm::fabs(v), exponent);
}
template <class A>
__device__ __forceinline__ A pool_result(PoolKind kind, A acc, int64_t count, A exponent) {
  if (kind == PoolKind::kAverage) return count > 0 ? acc / static_cast<A>(count) : A(0);
  if (kind == PoolKind::kLp) return dm::pow(acc, A(1) / exponent);
  return acc;
}

template <class T>
__global__ void global_pool_kernel(PoolKind kind, float p, const T* x, T* y, int64_t planes, int64_t spatial,
                                   typename Acc<T>::type lowest) {
  using A = typename Acc<T>::type;
  __shared__ A partial[kBlockThreads];
  const A exponent = static_cast<A>(p);
  const int tid = static_cast<int>(threadIdx.x);
  for (int64_t plane = blockIdx.x; plane < planes; plane += gridDim.x) {
    const T* xp = x + plane * spatial;
    A acc = kind == PoolKind::kMax ? lowest : A(0);
    for (int64_t i = tid; i < spatial; i += blockDim.x) acc = pool_step(kind, acc, to_acc(xp[i]), exponent);
    partial[tid] = acc;
    __syncthreads();
    for (int s = static_cast<int>(blockDim.x) / 2; s > 0; s >>= 1) {
      if (tid < s) {
        const A other = partial[tid + s];
        partial[tid] = kind == PoolKind::kMax ? (other > partial[tid] ? other : partial[tid]) : partial[tid] + other;
      }
      __syncthreads();
    }
    if (tid == 0) y[plane] = from_acc<T>(pool_result(kind, partial[0], spatial, exponent));
    __syncthreads();  // partial is rewritten for the next plane
  }
}

// Channels-last global pools: a thread per (n, c) walks the spatial
// positions, neighbouring threads reading neighbouring channels.
template <class T>
__global__ void global_pool_nhwc_kernel(PoolKind kind, float p, const T* x, T* y, int64_t planes, int64_t spatial,
                                        int64_t channels, typename Acc<T>::type lowest) {
  using A = typename Acc<T>::type;
  const A exponent = static_cast<A>(p);
  LOOM_GRID_STRIDE_LOOP(i, planes) {
    const T* xp = x + (i / channels) * spatial * channels + i % channels;
    A acc = kind == PoolKind::kMax ? lowest : A(0);
    for (int64_t s = 0; s < spatial; ++s) acc = pool_step(kind, acc, to_acc(xp[s * channels]), exponent);
    y[i] = from_acc<T>(pool_result(kind, acc, spatial, exponent));
  }
}

template <class A>
A lowest_float();
template <>
float lowest_float<float>() {
  return -FLT_MAX;
}
template <>
double lowest_float<double>() {
  return -DBL_MAX;
}

template <class T>
cudaError_t max_pool(const PoolGeometry& g, const void* x, void* y, int64_t n, typename Acc<T>::type lowest,
                     cudaStream_t s) {
  max_pool_kernel<T><<<grid_for(n), kBlockThreads, 0, s>>>(g, static_cast<const T*>(x), static_cast<T*>(y), n, lowest);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_pool(int32_t dtype, const PoolGeometry& g, const PoolParams& p, const void* x, void* y,
                        cudaStream_t s) {
  int64_t n = g.planes;
  for (int d = 0; d < kPoolDims; ++d) n *= g.out[d];
  if (n == 0) return cudaSuccess;
  if (p.kind == PoolKind::kMax) {
    switch (dtype) {
      case LOOM_DTYPE_FLOAT:
        return max_pool<float>(g, x, y, n, -FLT_MAX, s);
      case LOOM_DTYPE_FLOAT16:
        return max_pool<__half>(g, x, y, n, -FLT_MAX, s);
      case LOOM_DTYPE_DOUBLE:
        return max_pool<double>(g, x, y, n, -DBL_MAX, s);
      case LOOM_DTYPE_INT8:
        return max_pool<int8_t>(g, x, y, n, static_cast<int8_t>(-128), s);
      case LOOM_DTYPE_UINT8:
        return max_pool<uint8_t>(g, x, y, n, static_cast<uint8_t>(0), s);
      default:
        return cudaErrorInvalidValue;
    }
  }
  cudaError_t e = cudaErrorInvalidValue;
  dispatch_float(dtype, [&](auto tag) {
    using T = decltype(tag);
    sum_pool_kernel<T><<<grid_for(n), kBlockThreads, 0, s>>>(g, p, static_cast<const T*>(x), static_cast<T*>(y), n);
    e = cudaGetLastError();
  });
  return e;
}

cudaError_t launch_global_pool(int32_t dtype, PoolKind kind, float p, int64_t planes, int64_t spatial, const void* x,
                               void* y, cudaStream_t s, int64_t channels) {
  if (planes == 0) return cudaSuccess;
  if (channels > 0) {
    cudaError_t e = cudaErrorInvalidValue;
    dispatch_float(dtype, [&](auto tag) {
      using T = decltype(tag);
      using A = typename Acc<T>::type;
      global_pool_nhwc_kernel<T><<<grid_for(planes), kBlockThreads, 0, s>>>(
          kind, p, static_cast<const T*>(x), static_cast<T*>(y), planes, spatial, channels, lowest_float<A>());
      e = cudaGetLastError();
    });
    return e;
  }
  const unsigned blocks = static_cast<unsigned>(planes < (1 << 20) ? planes : (1 << 20));
  cudaError_t e = cudaErrorInvalidValue;
  dispatch_float(dtype, [&](auto tag) {
    using T = decltype(tag);
    using A = typename Acc<T>::type;
    const A lowest = lowest_float<A>();
    global_pool_kernel<T><<<blocks, kBlockThreads, 0, s>>>(kind, p, static_cast<const T*>(x), static_cast<T*>(y),
                                                           planes, spatial, lowest);
    e = cudaGetLastError();
  });
  return e;
}

}  // namespace loom::cuda
