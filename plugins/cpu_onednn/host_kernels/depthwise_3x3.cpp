#include "host_kernels/depthwise_3x3.h"

#include <algorithm>

#include "host_kernels/parallel.h"

namespace loom::onednn::host_kernels {
namespace {

typedef float Lanes __attribute__((vector_size(kDepthwiseLanes * sizeof(float))));


// The helpers below take and return 64-byte vectors; they are always
// inlined into the target_clones entry point, so no call crosses the ABI
// GCC warns about for targets without AVX-512.
#pragma GCC diagnostic ignored "-Wpsabi"
#define LOOM_INLINE inline __attribute__((always_inline))

LOOM_INLINE Lanes load(const float* p) {
  Lanes v;
  __builtin_memcpy(&v, p, sizeof(v));
  return v;
}

LOOM_INLINE void store(float* p, Lanes v) { __builtin_memcpy(p, &v, sizeof(v)); }

LOOM_INLINE Lanes clamp(Lanes a, Lanes lo, Lanes hi) {
  a = a < lo ? lo : a;  // a NaN stays NaN, as ONNX Clip leaves it
  return a > hi ? hi : a;
}

// One output vector whose window may reach into the padding (taps outside
// the image are skipped).
template <int SX>
LOOM_INLINE void edge_pixel(const float* const rows[3], const bool valid[3], const Lanes w[kDepthwiseTaps], Lanes bias,
                            const DepthwiseGeometry& g, int64_t ox, float* out, Lanes lo, Lanes hi) {
  Lanes acc = bias;
  for (int dy = 0; dy < 3; ++dy) {
    if (!valid[dy]) continue;
    for (int dx = 0; dx < 3; ++dx) {
      const int64_t ix = ox * SX - g.pad_left + dx;
      if (ix >= 0 && ix < g.w) acc += load(rows[dy] + ix * g.c) * w[dy * 3 + dx];
    }
  }
  store(out + ox * g.c, clamp(acc, lo, hi));
}

// X adjacent output vectors whose windows lie inside the image: each input
// vector is loaded once and used for every tap that reads it.
template <int SX, int X>
LOOM_INLINE void interior_strip(const float* const rows[3], const Lanes w[kDepthwiseTaps], Lanes bias, const DepthwiseGeometry& g,
                                int64_t ox, float* out, Lanes lo, Lanes hi) {
  constexpr int kColumns = (X - 1) * SX + 3;
  Lanes acc[X];
  for (int x = 0; x < X; ++x) acc[x] = bias;
  for (int dy = 0; dy < 3; ++dy) {
    const float* r = rows[dy] + (ox * SX - g.pad_left) * g.c;
    Lanes in[kColumns];
    for (int i = 0; i < kColumns; ++i) in[i] = load(r + i * g.c);
    for (int dx = 0; dx < 3; ++dx)
      for (int x = 0; x < X; ++x) acc[x] += in[x * SX + dx] * w[dy * 3 + dx];
  }
  for (int x = 0; x < X; ++x) store(out + (ox + x) * g.c, clamp(acc[x], lo, hi));
}

template <int SX, int X>
LOOM_INLINE void depthwise_rows_body(const float* in, const float* packed, const float* bias, float* out,
                                     const DepthwiseGeometry& g, int64_t r0, int64_t r1) {
  const Lanes lo = Lanes{} + g.lo, hi = Lanes{} + g.hi;
  // Outputs [first, last) have all three columns inside the image.
  const int64_t first = std::min(g.out_w, (g.pad_left + SX - 1) / SX);
  const int64_t last = g.w - 3 + g.pad_left < 0 ? first : std::clamp((g.w - 3 + g.pad_left) / SX + 1, first, g.out_w);
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t image = r / g.out_h, oy = r % g.out_h;
    const float* src = in + image * g.h * g.w * g.c;
    float* dst_row = out + (r - g.out_first_row) * g.out_w * g.c;
    for (int64_t c = 0; c < g.c; c += kDepthwiseLanes) {
      Lanes w[kDepthwiseTaps];
      for (int k = 0; k < kDepthwiseTaps; ++k) w[k] = load(packed + (c * kDepthwiseTaps) + k * kDepthwiseLanes);
      const Lanes b = load(bias + c);
      const float* rows[3];
      bool valid[3];
      bool all_valid = true;
      for (int dy = 0; dy < 3; ++dy) {
        const int64_t iy = oy * g.stride_y - g.pad_top + dy;
        valid[dy] = iy >= 0 && iy < g.h;
        all_valid &= valid[dy];
        rows[dy] = src + (valid[dy] ? iy - g.first_row : 0) * g.w * g.c + c;
      }
      float* o = dst_row + c;
      int64_t ox = 0;
      for (; ox < first; ++ox) edge_pixel<SX>(rows, valid, w, b, g, ox, o, lo, hi);
      if (all_valid) {
        for (; ox + X <= last; ox += X) interior_strip<SX, X>(rows, w, b, g, ox, o, lo, hi);
        for (; ox < last; ++ox) interior_strip<SX, 1>(rows, w, b, g, ox, o, lo, hi);
      }
      for (; ox < g.out_w; ++ox) edge_pixel<SX>(rows, valid, w, b, g, ox, o, lo, hi);
    }
  }
}

}  // namespace

// Strips of 8 outputs at stride 1 (10 input vectors a row) and 6 at stride
// 2 (13): the accumulators, the 9 filter vectors and one row of inputs fit
// AVX-512's 32 registers.
__attribute__((target_clones("avx512f", "avx2", "default"))) void depthwise_3x3_rows(const float* in, const float* packed,
                                                                                const float* bias, float* out,
                                                                                const DepthwiseGeometry& g, int64_t r0,
                                                                                int64_t r1) {
  if (g.stride_x == 1) depthwise_rows_body<1, 8>(in, packed, bias, out, g, r0, r1);
  else depthwise_rows_body<2, 6>(in, packed, bias, out, g, r0, r1);
}

void depthwise_3x3_rows_parallel(int threads, const float* in, const float* packed, const float* bias, float* out,
                             const DepthwiseGeometry& g, int64_t r0, int64_t r1) {
  for_each_thread_range(threads, r1 - r0, [&](int64_t begin, int64_t end) {
    depthwise_3x3_rows(in, packed, bias, out, g, r0 + begin, r0 + end);
  });
}

std::vector<float> pack_depthwise_3x3_filters(const std::vector<float>& weights, int64_t channels) {
  std::vector<float> packed(weights.size());
  for (int64_t c = 0; c < channels; ++c)
    for (int k = 0; k < kDepthwiseTaps; ++k)
      packed[(c / kDepthwiseLanes * kDepthwiseTaps + k) * kDepthwiseLanes + c % kDepthwiseLanes] =
          weights[c * kDepthwiseTaps + k];
  return packed;
}

}  // namespace loom::onednn::host_kernels
