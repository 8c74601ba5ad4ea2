// DynamicQuantizeLinear (opset 11+) on float32 data, as a host step: the
// range [min(0, min x), max(0, max x)] over the whole tensor, then
//
//   scale = max == min ? 1 : (max - min) / 255
//   zp    = round_half_even(clamp(0 - min / scale, 0, 255))
//   y     = saturate(round_half_even(x / scale) + zp)
//
// computed as the reference EP computes them, so the results are the same
// bits: NaN never enters the range (comparisons with NaN are false), a NaN
// x quantizes to zp, and the degenerate range (an all-zero x) gets scale 1
// as ONNX Runtime gives it. A zero point that is NaN (an infinite min over
// an infinite scale) is 255, as ONNX Runtime's min-then-max clamp gives.
// Both loops are split across the EP's threads; min / max of non-NaN
// values does not depend on the order, so neither does the result.
#include <algorithm>
#include <cmath>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "host_kernels/parallel.h"
#include "ops/op_builders.h"

namespace loom::onednn {
namespace {

// Elements below which one thread does a loop (no parallel region).
constexpr int64_t kMinChunk = 16384;

// The running range of p[0, n) folded into lo / hi: lo = x < lo ? x : lo,
// hi = x > hi ? x : hi (minps / maxps with x first are exactly that).
void fold_range(const float* p, int64_t n, float& lo, float& hi) {
  int64_t i = 0;
#if defined(__SSE2__)
  __m128 vlo = _mm_set1_ps(lo), vhi = _mm_set1_ps(hi);
  for (; i + 4 <= n; i += 4) {
    const __m128 v = _mm_loadu_ps(p + i);
    vlo = _mm_min_ps(v, vlo);
    vhi = _mm_max_ps(v, vhi);
  }
  alignas(16) float l[4], h[4];
  _mm_store_ps(l, vlo);
  _mm_store_ps(h, vhi);
  for (int k = 0; k < 4; ++k) {
    lo = l[k] < lo ? l[k] : lo;
    hi = h[k] > hi ? h[k] : hi;
  }
#endif
  for (; i < n; ++i) {
    lo = p[i] < lo ? p[i] : lo;
    hi = p[i] > hi ? p[i] : hi;
  }
}

// saturate(round_half_even(v) + zp) into uint8; NaN maps to zp (the
// reference EP's quantize_round).
uint8_t quantize_one(float v, int32_t zp) {
  float r = std::isnan(v) ? 0.f : std::nearbyint(v);
  r += static_cast<float>(zp);
  return static_cast<uint8_t>(std::min(255.f, std::max(0.f, r)));
}

// y[i] = quantize_one(x[i] / scale, zp). The vector path clamps x / scale
// to [-512, 512] first (anything beyond saturates whatever zp in [0, 255]
// is added) and rounds with cvtps2dq (round half to even in the default
// rounding mode, which nearbyint also uses); the packs saturate to [0, 255].
void quantize_range(const float* x, uint8_t* y, int64_t n, float scale, int32_t zp) {
  int64_t i = 0;
#if defined(__SSE2__)
  const __m128 vs = _mm_set1_ps(scale), lo = _mm_set1_ps(-512.f), hi = _mm_set1_ps(512.f);
  const __m128i vz = _mm_set1_epi32(zp);
  auto one = [&](const float* p) {
    __m128 v = _mm_div_ps(_mm_loadu_ps(p), vs);
    v = _mm_and_ps(v, _mm_cmpord_ps(v, v));  // NaN -> 0
    v = _mm_min_ps(_mm_max_ps(v, lo), hi);
    return _mm_add_epi32(_mm_cvtps_epi32(v), vz);
  };
  for (; i + 16 <= n; i += 16) {
    const __m128i a = _mm_packs_epi32(one(x + i), one(x + i + 4));
    const __m128i b = _mm_packs_epi32(one(x + i + 8), one(x + i + 12));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), _mm_packus_epi16(a, b));
  }
#endif
  for (; i < n; ++i) y[i] = quantize_one(x[i] / scale, zp);
}

}  // namespace

size_t build_dynamic_quantize_linear(ProgramBuilder& b, const NodeSpec& n, const Chain&) {
  using dnnl::memory;
  const ValueId x = b.plain(b.value_of(n.inputs[0]));
  if (b.desc(x).data_type() != memory::data_type::f32) n.fail("x must be float32");
  const std::vector<int64_t> dims = b.dims(x);
  const int64_t count = element_count(dims);
  if (count == 0) n.fail("x is empty (zero-sized); oneDNN has no empty memory");
  const ValueId y = b.new_value(plain_desc(dims, memory::data_type::u8), dims, n.outputs[0]);
  const ValueId scale = b.new_value(plain_desc({}), {}, n.outputs[1]);
  const ValueId zero = b.new_value(plain_desc({}, memory::data_type::u8), {}, n.outputs[2]);
  const int threads = b.options().threads;
  b.add_host_step(
      [count, threads](const std::vector<dnnl::memory>& m) {
        const auto* px = static_cast<const float*>(m[0].get_data_handle());
        auto* py = static_cast<uint8_t*>(m[1].get_data_handle());
        const int64_t chunks = std::clamp<int64_t>(count / kMinChunk, 1, std::max(threads, 1));
        std::vector<float> los(static_cast<size_t>(chunks), 0.f), his(static_cast<size_t>(chunks), 0.f);
        auto range = [&](int64_t c0, int64_t c1) {
          for (int64_t c = c0; c < c1; ++c) {
            const int64_t i0 = count * c / chunks, i1 = count * (c + 1) / chunks;
            fold_range(px + i0, i1 - i0, los[static_cast<size_t>(c)], his[static_cast<size_t>(c)]);
          }
        };
        if (chunks == 1) range(0, 1);
        else for_each_thread_range(threads, chunks, range);
        float lo = 0.f, hi = 0.f;  // the range always includes zero
        for (int64_t c = 0; c < chunks; ++c) {
          lo = std::min(lo, los[static_cast<size_t>(c)]);
          hi = std::max(hi, his[static_cast<size_t>(c)]);
        }
        const float s = hi == lo ? 1.f : (hi - lo) / 255.f;
        // min then max: a NaN (-inf / inf) becomes 255, as in ONNX Runtime.
        const float zp_f = std::nearbyint(std::max(0.f, std::min(255.f, 0.f - lo / s)));
        const int32_t zp = static_cast<int32_t>(zp_f);
        auto quantize = [&](int64_t c0, int64_t c1) {
          const int64_t i0 = count * c0 / chunks, i1 = count * c1 / chunks;
          quantize_range(px + i0, py + i0, i1 - i0, s, zp);
        };
        if (chunks == 1) quantize(0, 1);
        else for_each_thread_range(threads, chunks, quantize);
        *static_cast<float*>(m[2].get_data_handle()) = s;
        *static_cast<uint8_t*>(m[3].get_data_handle()) = static_cast<uint8_t>(zp);
      },
      {x, y, scale, zero}, n.label());
  b.define(n.outputs[0], y);
  b.define(n.outputs[1], scale);
  b.define(n.outputs[2], zero);
  return 0;
}

}  // namespace loom::onednn
