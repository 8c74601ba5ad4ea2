#include "host_kernels/pointwise_1x1.h"

#include <immintrin.h>

namespace loom::onednn::host_kernels {
namespace {

typedef float Wide __attribute__((vector_size(16 * sizeof(float))));
typedef float Narrow __attribute__((vector_size(8 * sizeof(float))));

// Rows computed together: 8 x (Q + 1) accumulators, the Q + 1 weight
// vectors of one input channel and a broadcast fit AVX-512's 32 registers.
constexpr int64_t kTileRows = 8;

// Compiled for AVX-512 (the step is only built where the CPU has it) and
// always inlined into the entry points, so no vector crosses a call.
#pragma GCC diagnostic ignored "-Wpsabi"
#define LOOM_INLINE inline __attribute__((always_inline, target("avx512f,fma")))

template <class V>
LOOM_INLINE V load(const float* p) {
  V v;
  __builtin_memcpy(&v, p, sizeof(v));
  return v;
}

template <class V>
LOOM_INLINE void store(float* p, V v) {
  __builtin_memcpy(p, &v, sizeof(v));
}

// A broadcast (written with the vector extension, GCC builds it on the stack).
template <class V>
LOOM_INLINE V splat(float x);
template <>
LOOM_INLINE Wide splat<Wide>(float x) {
  return reinterpret_cast<Wide>(_mm512_set1_ps(x));
}
template <>
LOOM_INLINE Narrow splat<Narrow>(float x) {
  return reinterpret_cast<Narrow>(_mm256_set1_ps(x));
}

template <class V>
LOOM_INLINE V clamp(V a, float lo, float hi) {
  const V l = splat<V>(lo), h = splat<V>(hi);
  a = a < l ? l : a;  // a NaN stays NaN, as ONNX Clip leaves it
  return a > h ? h : a;
}

// Output rows [m, m + R) (pixels, channels-last): in[m..][k] times the
// weights (row k at weights + k * weight_stride), plus bias, plus the
// residual's rows when `Residual`, clamped; output channels [col, col + 16 Q
// (+ 8)) of the n. They are Q 16-lane vectors, then one 8-lane vector when
// `Half`. `weights` points at the tile's first column.
template <int Q, bool Half, int R, bool Residual>
LOOM_INLINE void tile(const float* in, const float* weights, int64_t weight_stride, const float* bias,
                      const float* residual, float* out, const PointwiseGeometry& g, int64_t m, int64_t col) {
  bias += col;
  out += col;
  if (Residual) residual += col;
  constexpr int kWide = Q > 0 ? Q : 1;
  Wide acc[R][kWide];
  Narrow tail[R];
  for (int r = 0; r < R; ++r) {
    for (int q = 0; q < Q; ++q) acc[r][q] = load<Wide>(bias + 16 * q);
    if (Half) tail[r] = load<Narrow>(bias + 16 * Q);
  }
  const float* a = in + m * g.k;
  for (int64_t k = 0; k < g.k; ++k) {
    const float* w = weights + k * weight_stride;
    Wide wide[kWide];
    for (int q = 0; q < Q; ++q) wide[q] = load<Wide>(w + 16 * q);
    const Narrow narrow = Half ? load<Narrow>(w + 16 * Q) : Narrow{};
    for (int r = 0; r < R; ++r) {
      const float v = a[r * g.k + k];
      for (int q = 0; q < Q; ++q) acc[r][q] += splat<Wide>(v) * wide[q];
      if (Half) tail[r] += splat<Narrow>(v) * narrow;
    }
  }
  for (int r = 0; r < R; ++r) {
    float* o = out + (m + r) * g.n;
    const float* res = Residual ? residual + (m + r) * g.n : nullptr;
    for (int q = 0; q < Q; ++q) {
      Wide v = acc[r][q];
      if (Residual) v += load<Wide>(res + 16 * q);
      store(o + 16 * q, clamp(v, g.lo, g.hi));
    }
    if (!Half) continue;
    Narrow v = tail[r];
    if (Residual) v += load<Narrow>(res + 16 * Q);
    store(o + 16 * Q, clamp(v, g.lo, g.hi));
  }
}

// Output rows [m0, m1), R rows at a time, in column chunks of Q 16-lane
// vectors (then one 8-lane vector when `Half`): one chunk on narrow outputs
// (n = 16 Q + 8), n / 16 Q chunks on expansions.
template <int Q, bool Half, int R, bool Residual>
__attribute__((target("avx512f,fma"))) void pointwise_rows(const float* in, const float* packed, const float* bias,
                                                       const float* residual, float* out, const PointwiseGeometry& g,
                                                       int64_t m0, int64_t m1) {
  constexpr int64_t kChunk = 16 * Q + (Half ? 8 : 0);
  int64_t m = m0;
  for (; m + R <= m1; m += R)
    for (int64_t c = 0; c < g.n; c += kChunk)
      tile<Q, Half, R, Residual>(in, packed + c, g.n, bias, residual, out, g, m, c);
  for (; m < m1; ++m)
    for (int64_t c = 0; c < g.n; c += kChunk)
      tile<Q, Half, 1, Residual>(in, packed + c, g.n, bias, residual, out, g, m, c);
}


template <int Q, bool Half>
PointwiseKernels narrow_kernels() {
  return {pointwise_rows<Q, Half, kTileRows, false>, pointwise_rows<Q, Half, kTileRows, true>};
}

// Q vectors of accumulators for R = 24 / Q rows (with the Q weight vectors
// and a broadcast, within AVX-512's 32 registers).
template <int Q>
PointwiseKernels expand_kernels() {
  return {pointwise_rows<Q, false, 24 / Q, false>, pointwise_rows<Q, false, 24 / Q, true>};
}

// Input channels an expansion may have, and its weights' size: they stay in
// the L1 / L2 cache while every tile reads them.
constexpr int64_t kExpandMaxInputs = 64;
constexpr int64_t kExpandMaxWeightBytes = 256 * 1024;

}  // namespace

std::optional<std::pair<PointwiseKind, PointwiseKernels>> pointwise_kernels_for(int64_t k, int64_t n) {
  switch (n) {
    case 8: return std::pair{PointwiseKind::kNarrow, narrow_kernels<0, true>()};
    case 16: return std::pair{PointwiseKind::kNarrow, narrow_kernels<1, false>()};
    case 24: return std::pair{PointwiseKind::kNarrow, narrow_kernels<1, true>()};
    case 40: return std::pair{PointwiseKind::kNarrow, narrow_kernels<2, true>()};
    default: break;
  }
  if (k > kExpandMaxInputs || n % 16 != 0 || k * n * static_cast<int64_t>(sizeof(float)) > kExpandMaxWeightBytes)
    return std::nullopt;
  const int64_t vectors = n / 16;
  if (vectors % 6 == 0) return std::pair{PointwiseKind::kExpand, expand_kernels<6>()};
  if (vectors % 4 == 0) return std::pair{PointwiseKind::kExpand, expand_kernels<4>()};
  if (vectors % 3 == 0) return std::pair{PointwiseKind::kExpand, expand_kernels<3>()};
  if (vectors % 2 == 0) return std::pair{PointwiseKind::kExpand, expand_kernels<2>()};
  return std::pair{PointwiseKind::kExpand, expand_kernels<1>()};
}

// Small maps (at most 256 pixels: MobileNetV2's 14x14 and 7x7 stages):
// weights packed per column chunk of 16 Q channels ([chunk][k][16 Q], one
// contiguous block a chunk), each chunk computing its pixels 7 rows at a
// time while its weights stay in cache. Up to 2 MB of weights: ResNet-50's
// 7x7 layers (4 MB) ran 1.3-1.9 % slower than with oneDNN.
namespace {

constexpr int64_t kSmallMapMaxPixels = 256;
constexpr int64_t kSmallMapMaxWeightBytes = 2 * 1024 * 1024;
constexpr int kSmallMapRows = kPointwiseSmallMapRows;

template <int Q, bool Residual>
__attribute__((target("avx512f,fma"))) void chunk_columns(const float* in, const float* packed, const float* bias,
                                                         const float* residual, float* out, const PointwiseGeometry& g,
                                                         int64_t m0, int64_t m1, int64_t c0, int64_t c1) {
  constexpr int R = kSmallMapRows;
  for (int64_t c = c0; c < c1; ++c) {
    const float* weights = packed + c * g.k * 16 * Q;
    int64_t m = m0;
    for (; m + R <= m1; m += R)
      tile<Q, false, R, Residual>(in, weights, 16 * Q, bias, residual, out, g, m, c * 16 * Q);
    for (; m < m1; ++m) tile<Q, false, 1, Residual>(in, weights, 16 * Q, bias, residual, out, g, m, c * 16 * Q);
  }
}

}  // namespace

std::optional<PointwiseChunkKernels> pointwise_chunk_kernels_for(int64_t k, int64_t n, int64_t pixels) {
  if (pixels > kSmallMapMaxPixels || n % 32 != 0 ||
      k * n * static_cast<int64_t>(sizeof(float)) > kSmallMapMaxWeightBytes)
    return std::nullopt;
  if (n % 48 == 0) return PointwiseChunkKernels{chunk_columns<3, false>, chunk_columns<3, true>, 48};
  return PointwiseChunkKernels{chunk_columns<2, false>, chunk_columns<2, true>, 32};
}

}  // namespace loom::onednn::host_kernels
