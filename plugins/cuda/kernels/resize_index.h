// Resize arithmetic (kernels/resize.cu), shared with the CPU unit tests:
// for one axis and one output coordinate, the input taps (index, weight)
// exactly as the reference EP computes them (plugins/reference/kernels/
// tensor_resize.cpp, which follows onnx/backend/test/case/node/resize.py):
// the same double arithmetic in the same order. On the device every double
// operation is an explicitly rounded intrinsic, so nvcc cannot fuse a
// multiply and an add into an FMA and move a coordinate across an integer
// (nearest and floor are discontinuous there); the host compiles plain
// operations (x86-64 without -mfma does not fuse either).
#pragma once

#include <math.h>

#include <cstdint>

#include "kernels/index_math.h"

namespace loom::cuda {

enum class ResizeMode : int { kNearest = 0, kLinear = 1, kCubic = 2 };
enum class ResizeCoord : int {
  kHalfPixel = 0,
  kHalfPixelSymmetric = 1,
  kPytorchHalfPixel = 2,
  kAlignCorners = 3,
  kAsymmetric = 4,
  kTfHalfPixelForNn = 5,
  kTfCropAndResize = 6,
};
// kSimple: Upsample and Resize-10 (as onnxruntime): ceil when downsampling,
// truncation otherwise.
enum class NearestRound : int { kRoundPreferFloor = 0, kRoundPreferCeil = 1, kFloor = 2, kCeil = 3, kSimple = 4 };

struct ResizeAttrs {
  ResizeMode mode = ResizeMode::kNearest;
  ResizeCoord coord = ResizeCoord::kHalfPixel;
  NearestRound nearest = NearestRound::kRoundPreferFloor;
  double cubic_a = -0.75;
  bool exclude_outside = false;
};

// The taps of one output coordinate along one axis: `count` (1..4) input
// indices, already clamped to [0, in), with their weights. `outside`:
// tf_crop_and_resize maps the coordinate outside the input (the output
// element is the extrapolation value).
struct ResizeTap {
  int64_t index[4];
  double weight[4];
  int32_t count;
  int32_t outside;
};

namespace rz {
// Correctly rounded double operations, never contracted into an FMA.
LOOM_HD double add(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
LOOM_HD double sub(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dsub_rn(a, b);
#else
  return a - b;
#endif
}
LOOM_HD double mul(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
LOOM_HD double div(double a, double b) {
#ifdef __CUDA_ARCH__
  return __ddiv_rn(a, b);
#else
  return a / b;
#endif
}
}  // namespace rz

// Output coordinate x of an axis of `in` -> `out` elements (scale s, roi
// [r0, r1] for tf_crop_and_resize) in input coordinates. As the ONNX
// reference, the "resized length" is s * in, not out.
LOOM_HD double resize_source_coord(ResizeCoord coord, int64_t x, int64_t in, int64_t out, double s, double r0,
                                   double r1) {
  const double len = rz::mul(s, static_cast<double>(in));
  const double xr = static_cast<double>(x);
  switch (coord) {
    case ResizeCoord::kHalfPixel: return rz::sub(rz::div(rz::add(xr, 0.5), s), 0.5);
    case ResizeCoord::kHalfPixelSymmetric: {
      const double adjustment = rz::div(static_cast<double>(out), len);
      const double center = rz::div(static_cast<double>(in), 2.0);
      return rz::sub(rz::add(rz::mul(center, rz::sub(1.0, adjustment)), rz::div(rz::add(xr, 0.5), s)), 0.5);
    }
    case ResizeCoord::kPytorchHalfPixel: return out > 1 ? rz::sub(rz::div(rz::add(xr, 0.5), s), 0.5) : 0.0;
    case ResizeCoord::kAlignCorners:
      return len == 1.0 ? 0.0 : rz::div(rz::mul(xr, static_cast<double>(in - 1)), rz::sub(len, 1.0));
    case ResizeCoord::kAsymmetric: return rz::div(xr, s);
    case ResizeCoord::kTfHalfPixelForNn: return rz::div(rz::add(xr, 0.5), s);
    case ResizeCoord::kTfCropAndResize: {
      const double span = static_cast<double>(in - 1);
      if (out > 1)
        return rz::add(rz::mul(r0, span),
                       rz::div(rz::mul(rz::mul(xr, rz::sub(r1, r0)), span), static_cast<double>(out - 1)));
      return rz::mul(rz::mul(0.5, rz::add(r0, r1)), span);
    }
  }
  return 0.0;
}

// The nearest input index of coordinate xo (before clamping).
LOOM_HD int64_t resize_nearest_index(NearestRound rounding, double xo, double s) {
  const double fl = floor(xo);
  const double frac = rz::sub(xo, fl);
  switch (rounding) {
    case NearestRound::kRoundPreferFloor: return static_cast<int64_t>(frac <= 0.5 ? fl : rz::add(fl, 1.0));
    case NearestRound::kRoundPreferCeil: return static_cast<int64_t>(frac < 0.5 ? fl : rz::add(fl, 1.0));
    case NearestRound::kFloor: return static_cast<int64_t>(fl);
    case NearestRound::kCeil: return static_cast<int64_t>(ceil(xo));
    case NearestRound::kSimple: return static_cast<int64_t>(s < 1.0 ? ceil(xo) : trunc(xo));
  }
  return 0;
}

// The Keys cubic kernel with coefficient a at distance d.
LOOM_HD double resize_cubic_weight(double a, double d) {
  d = fabs(d);
  if (d <= 1.0) return rz::add(rz::mul(rz::mul(rz::sub(rz::mul(rz::add(a, 2.0), d), rz::add(a, 3.0)), d), d), 1.0);
  if (d < 2.0)
    return rz::sub(rz::mul(rz::add(rz::mul(rz::sub(rz::mul(a, d), rz::mul(5.0, a)), d), rz::mul(8.0, a)), d),
                   rz::mul(4.0, a));
  return 0.0;
}

// The taps of output coordinate x along an axis (antialias is not
// supported: the kernel table declines it).
LOOM_HD ResizeTap resize_tap(const ResizeAttrs& a, int64_t x, int64_t in, int64_t out, double s, double r0,
                             double r1) {
  ResizeTap t;
  for (int k = 0; k < 4; ++k) {
    t.index[k] = 0;
    t.weight[k] = 0.0;
  }
  t.count = 1;
  t.outside = 0;
  const double xo = resize_source_coord(a.coord, x, in, out, s, r0, r1);
  if (a.coord == ResizeCoord::kTfCropAndResize && (xo < 0.0 || xo > static_cast<double>(in - 1))) {
    t.outside = 1;
    return t;
  }
  const double fl = floor(xo);
  const double frac = rz::sub(xo, fl);
  const int64_t base = static_cast<int64_t>(fl);
  int64_t idx[4];
  double w[4];
  int n = 0;
  if (a.mode == ResizeMode::kNearest) {
    idx[0] = resize_nearest_index(a.nearest, xo, s);
    w[0] = 1.0;
    n = 1;
  } else if (a.mode == ResizeMode::kLinear) {
    idx[0] = base;
    idx[1] = base + 1;
    w[0] = rz::sub(1.0, frac);
    w[1] = frac;
    n = 2;
  } else {
    for (int k = 0; k < 4; ++k) idx[k] = base - 1 + k;
    w[0] = resize_cubic_weight(a.cubic_a, rz::add(1.0, frac));
    w[1] = resize_cubic_weight(a.cubic_a, frac);
    w[2] = resize_cubic_weight(a.cubic_a, rz::sub(1.0, frac));
    w[3] = resize_cubic_weight(a.cubic_a, rz::sub(2.0, frac));
    n = 4;
  }
  if (a.mode != ResizeMode::kNearest && a.exclude_outside) {
    for (int k = 0; k < n; ++k)
      if (idx[k] < 0 || idx[k] >= in) w[k] = 0.0;
    double sum = 0.0;
    for (int k = 0; k < n; ++k) sum = rz::add(sum, w[k]);
    if (sum != 0.0)
      for (int k = 0; k < n; ++k) w[k] = rz::div(w[k], sum);
  }
  int m = 0;
  for (int k = 0; k < n; ++k) {
    if (w[k] == 0.0 && n > 1) continue;  // zero taps are dropped
    t.index[m] = idx[k] < 0 ? 0 : idx[k] > in - 1 ? in - 1 : idx[k];
    t.weight[m] = w[k];
    ++m;
  }
  if (m == 0) {  // every weight was zero
    t.index[0] = base < 0 ? 0 : base > in - 1 ? in - 1 : base;
    t.weight[0] = 0.0;
    m = 1;
  }
  t.count = m;
  return t;
}

// Where the resize kernels find an axis: its input and output sizes, the
// input stride, its scale and roi, and where its output coordinates' taps
// start in the tap table (one ResizeTap per output coordinate of each
// axis, axes in order).
struct ResizeGeometry {
  int rank = 0;
  int64_t in_dims[kMaxRank] = {};
  int64_t in_strides[kMaxRank] = {};
  int64_t out_dims[kMaxRank] = {};
  int64_t tap_offset[kMaxRank] = {};
  double scale[kMaxRank] = {};
  double roi_start[kMaxRank] = {};
  double roi_end[kMaxRank] = {};

  // The axis and output coordinate of tap-table entry i.
  LOOM_HD void tap_position(int64_t i, int& axis, int64_t& x) const {
    axis = 0;
    while (axis + 1 < rank && i >= tap_offset[axis + 1]) ++axis;
    x = i - tap_offset[axis];
  }
  LOOM_HD ResizeTap tap(const ResizeAttrs& a, int64_t i) const {
    int d;
    int64_t x;
    tap_position(i, d, x);
    return resize_tap(a, x, in_dims[d], out_dims[d], scale[d], roi_start[d], roi_end[d]);
  }
};

}  // namespace loom::cuda
