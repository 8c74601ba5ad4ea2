// Index arithmetic of the convolution and pooling kernels, shared by the
// host (which fills these plain structs, and the unit tests, which run them
// on the CPU) and the device code: the zero-filling window copy that pre-pads
// a convolution's input or crops a transposed convolution's result, and the
// taps of one pooling window. Plain C++ under g++; __host__ __device__
// under nvcc.
#pragma once

#include <cstdint>

#include "kernels/index_math.h"

namespace loom::cuda {

// y (dims out_dims, row major) from x (dims in_dims): element y[o] is
// x[o - begin] where that lies inside x, else zero. A positive begin pads
// in front, a negative one crops.
struct WindowCopy {
  int rank = 0;
  int64_t out_dims[kMaxRank] = {};
  int64_t in_dims[kMaxRank] = {};
  int64_t begin[kMaxRank] = {};

  // Offset in x of output element `linear`, or -1 for a zero.
  LOOM_HD int64_t source(int64_t linear) const {
    int64_t off = 0, stride = 1;
    bool inside = true;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t q = linear / out_dims[d];
      const int64_t c = linear - q * out_dims[d] - begin[d];
      linear = q;
      if (c < 0 || c >= in_dims[d]) inside = false;
      off += c * stride;
      stride *= in_dims[d];
    }
    return inside ? off : -1;
  }
};

// Pooling geometry in exactly kPoolDims spatial dims: lower ranks are
// lifted with leading dims of size 1 (kernel, stride, dilation 1, no pads),
// which change neither the windows nor their counts.
constexpr int kPoolDims = 3;

struct PoolGeometry {
  int64_t planes = 0;    // N * C
  int64_t channels = 0;  // C when x and y are channels-last ([N, spatial..., C]), else 0
  int64_t in[kPoolDims] = {1, 1, 1}, out[kPoolDims] = {1, 1, 1}, kernel[kPoolDims] = {1, 1, 1};
  int64_t strides[kPoolDims] = {1, 1, 1}, dilations[kPoolDims] = {1, 1, 1};
  int64_t pad_begin[kPoolDims] = {}, pad_end[kPoolDims] = {};
};

// The taps of one window along one dim: its first input coordinate
// `start` (tap k reads start + k * dilation), the taps [lo, hi) that land
// inside the input, and `padded`, the taps that land inside the input or
// its pads (the first `padded` taps: count_include_pad counts these, so a
// ceil_mode window reaching past the end padding counts only up to it).
struct PoolTaps {
  int64_t start = 0, lo = 0, hi = 0, padded = 0;
};

namespace pool_detail {
// ceil(a / b) for b > 0 and any sign of a.
LOOM_HD int64_t ceil_div(int64_t a, int64_t b) { return a > 0 ? (a + b - 1) / b : -((-a) / b); }
LOOM_HD int64_t clamp(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }
}  // namespace pool_detail

LOOM_HD PoolTaps pool_taps(const PoolGeometry& g, int d, int64_t o) {
  const int64_t k = g.kernel[d], dil = g.dilations[d];
  PoolTaps t;
  t.start = o * g.strides[d] - g.pad_begin[d];
  t.lo = pool_detail::clamp(pool_detail::ceil_div(-t.start, dil), 0, k);
  t.hi = pool_detail::clamp(pool_detail::ceil_div(g.in[d] - t.start, dil), t.lo, k);
  t.padded = pool_detail::clamp(pool_detail::ceil_div(g.in[d] + g.pad_end[d] - t.start, dil), 0, k);
  return t;
}

}  // namespace loom::cuda
