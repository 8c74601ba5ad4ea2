// Resize's index arithmetic (kernels/resize_index.h) on the CPU: the taps
// of every mode, coordinate transformation and rounding against a
// transcription of the reference EP's tensor_resize.cpp (bit for bit),
// hand-computed coordinates, and the tap table's axis lookup. No GPU
// needed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "kernels/resize_index.h"

namespace loom::cuda {
namespace {

using Dims = std::vector<int64_t>;

// The reference EP's arithmetic (plugins/reference/kernels/tensor_resize.cpp,
// antialias off), transcribed: the oracle for resize_tap.
struct RefTaps {
  std::vector<int64_t> index;
  std::vector<double> weight;
  bool outside = false;
};

double ref_coord(ResizeCoord c, int64_t x, int64_t in, int64_t out, double s, double r0, double r1) {
  const double len = s * static_cast<double>(in);
  const double xr = static_cast<double>(x);
  switch (c) {
    case ResizeCoord::kHalfPixel: return (xr + 0.5) / s - 0.5;
    case ResizeCoord::kHalfPixelSymmetric: {
      const double adjustment = static_cast<double>(out) / len;
      const double center = static_cast<double>(in) / 2.0;
      return center * (1.0 - adjustment) + (xr + 0.5) / s - 0.5;
    }
    case ResizeCoord::kPytorchHalfPixel: return out > 1 ? (xr + 0.5) / s - 0.5 : 0.0;
    case ResizeCoord::kAlignCorners: return len == 1.0 ? 0.0 : xr * static_cast<double>(in - 1) / (len - 1.0);
    case ResizeCoord::kAsymmetric: return xr / s;
    case ResizeCoord::kTfHalfPixelForNn: return (xr + 0.5) / s;
    case ResizeCoord::kTfCropAndResize:
      return out > 1 ? r0 * static_cast<double>(in - 1) +
                           xr * (r1 - r0) * static_cast<double>(in - 1) / static_cast<double>(out - 1)
                     : 0.5 * (r0 + r1) * static_cast<double>(in - 1);
  }
  return 0.0;
}

int64_t ref_nearest(NearestRound n, double xo, double s) {
  const double fl = std::floor(xo);
  const double frac = xo - fl;
  switch (n) {
    case NearestRound::kRoundPreferFloor: return static_cast<int64_t>(frac <= 0.5 ? fl : fl + 1);
    case NearestRound::kRoundPreferCeil: return static_cast<int64_t>(frac < 0.5 ? fl : fl + 1);
    case NearestRound::kFloor: return static_cast<int64_t>(fl);
    case NearestRound::kCeil: return static_cast<int64_t>(std::ceil(xo));
    case NearestRound::kSimple: return static_cast<int64_t>(s < 1.0 ? std::ceil(xo) : std::trunc(xo));
  }
  return 0;
}

double ref_cubic(double a, double d) {
  d = std::abs(d);
  if (d <= 1.0) return ((a + 2.0) * d - (a + 3.0)) * d * d + 1.0;
  if (d < 2.0) return ((a * d - 5.0 * a) * d + 8.0 * a) * d - 4.0 * a;
  return 0.0;
}

RefTaps ref_taps(const ResizeAttrs& a, int64_t x, int64_t in, int64_t out, double s, double r0, double r1) {
  RefTaps t;
  const double xo = ref_coord(a.coord, x, in, out, s, r0, r1);
  if (a.coord == ResizeCoord::kTfCropAndResize && (xo < 0.0 || xo > static_cast<double>(in - 1))) {
    t.outside = true;
    return t;
  }
  std::vector<int64_t> idx;
  std::vector<double> w;
  const double fl = std::floor(xo);
  const double frac = xo - fl;
  const int64_t base = static_cast<int64_t>(fl);
  if (a.mode == ResizeMode::kNearest) {
    idx.push_back(ref_nearest(a.nearest, xo, s));
    w.push_back(1.0);
  } else if (a.mode == ResizeMode::kLinear) {
    idx = {base, base + 1};
    w = {1.0 - frac, frac};
  } else {
    idx = {base - 1, base, base + 1, base + 2};
    w = {ref_cubic(a.cubic_a, 1.0 + frac), ref_cubic(a.cubic_a, frac), ref_cubic(a.cubic_a, 1.0 - frac),
         ref_cubic(a.cubic_a, 2.0 - frac)};
  }
  if (a.exclude_outside && a.mode != ResizeMode::kNearest)
    for (size_t k = 0; k < idx.size(); ++k)
      if (idx[k] < 0 || idx[k] >= in) w[k] = 0.0;
  if (a.mode != ResizeMode::kNearest && a.exclude_outside) {
    double sum = 0.0;
    for (double v : w) sum += v;
    if (sum != 0.0)
      for (double& v : w) v /= sum;
  }
  for (size_t k = 0; k < idx.size(); ++k) {
    if (w[k] == 0.0 && idx.size() > 1) continue;
    t.index.push_back(std::clamp<int64_t>(idx[k], 0, in - 1));
    t.weight.push_back(w[k]);
  }
  if (t.index.empty()) {
    t.index.push_back(std::clamp<int64_t>(base, 0, in - 1));
    t.weight.push_back(0.0);
  }
  return t;
}

TEST(CudaResizeIndex, TapsMatchTheReferenceTranscription) {
  struct Axis {
    int64_t in, out;
    double scale;  // as the kernel derives it: out / in from sizes, or given
  };
  const std::vector<Axis> axes = {{5, 9, 9.0 / 5}, {7, 4, 4.0 / 7},  {7, 3, 0.5},  {2, 9, 4.5},  {1, 4, 4.0},
                                  {4, 1, 0.25},    {3, 3, 1.0},      {6, 12, 2.0}, {5, 2, 0.4},  {8, 5, 5.0 / 8},
                                  {10, 25, 2.5},   {9, 9, 1.0}};
  int checked = 0;
  for (ResizeMode mode : {ResizeMode::kNearest, ResizeMode::kLinear, ResizeMode::kCubic})
    for (int c = 0; c <= static_cast<int>(ResizeCoord::kTfCropAndResize); ++c)
      for (int nr = 0; nr <= static_cast<int>(NearestRound::kSimple); ++nr)
        for (bool exclude : {false, true})
          for (double cubic_a : {-0.75, -0.5})
            for (const Axis& ax : axes)
              for (const auto& roi : std::vector<std::pair<double, double>>{{0.0, 1.0}, {0.2, 0.7}, {-0.3, 1.4}}) {
                ResizeAttrs a;
                a.mode = mode;
                a.coord = static_cast<ResizeCoord>(c);
                a.nearest = static_cast<NearestRound>(nr);
                a.exclude_outside = exclude;
                a.cubic_a = cubic_a;
                for (int64_t x = 0; x < ax.out; ++x) {
                  const RefTaps want = ref_taps(a, x, ax.in, ax.out, ax.scale, roi.first, roi.second);
                  const ResizeTap got = resize_tap(a, x, ax.in, ax.out, ax.scale, roi.first, roi.second);
                  ASSERT_EQ(got.outside != 0, want.outside);
                  if (want.outside) continue;
                  ASSERT_EQ(static_cast<size_t>(got.count), want.index.size())
                      << static_cast<int>(mode) << " " << c << " " << nr << " x " << x;
                  for (int k = 0; k < got.count; ++k) {
                    ASSERT_EQ(got.index[k], want.index[static_cast<size_t>(k)]);
                    ASSERT_EQ(got.weight[k], want.weight[static_cast<size_t>(k)]);  // bit for bit
                  }
                  ++checked;
                }
              }
  EXPECT_GT(checked, 10000);
}

TEST(CudaResizeIndex, HandComputedCoordinates) {
  // 5 -> 9, half_pixel: x = 0 -> (0.5 / 1.8) - 0.5 = -0.2222...
  EXPECT_NEAR(resize_source_coord(ResizeCoord::kHalfPixel, 0, 5, 9, 1.8, 0, 1), -2.0 / 9.0, 1e-15);
  // align_corners 5 -> 9: x * 4 / 8.
  EXPECT_DOUBLE_EQ(resize_source_coord(ResizeCoord::kAlignCorners, 3, 5, 9, 1.8, 0, 1), 1.5);
  // asymmetric 7 -> 4 (scale 4/7): x * 7 / 4.
  EXPECT_DOUBLE_EQ(resize_source_coord(ResizeCoord::kAsymmetric, 2, 7, 4, 4.0 / 7.0, 0, 1), 3.5);
  // pytorch_half_pixel with one output: 0.
  EXPECT_EQ(resize_source_coord(ResizeCoord::kPytorchHalfPixel, 0, 7, 1, 1.0 / 7.0, 0, 1), 0.0);
  // tf_crop_and_resize, roi [0.2, 0.7] of 11 -> 6: 0.2 * 10 + x * 0.5 * 10 / 5 = 2 + x.
  EXPECT_NEAR(resize_source_coord(ResizeCoord::kTfCropAndResize, 3, 11, 6, 6.0 / 11, 0.2, 0.7), 5.0, 1e-12);

  // Linear at half_pixel x = 0 of 5 -> 9: base -1 (clamped to 0) and 0.
  ResizeAttrs lin;
  lin.mode = ResizeMode::kLinear;
  const ResizeTap t = resize_tap(lin, 0, 5, 9, 1.8, 0, 1);
  ASSERT_EQ(t.count, 2);
  EXPECT_EQ(t.index[0], 0);
  EXPECT_EQ(t.index[1], 0);
  EXPECT_NEAR(t.weight[0], 2.0 / 9.0, 1e-15);
  EXPECT_NEAR(t.weight[1], 7.0 / 9.0, 1e-15);
  // An exact source coordinate keeps one tap (the zero weight is dropped).
  const ResizeTap one = resize_tap(lin, 2, 3, 3, 1.0, 0, 1);
  ASSERT_EQ(one.count, 1);
  EXPECT_EQ(one.index[0], 2);
  EXPECT_EQ(one.weight[0], 1.0);

  // Nearest rounding at a tie (asymmetric 2 -> 4: x = 1 -> 0.5).
  ResizeAttrs nn;
  nn.coord = ResizeCoord::kAsymmetric;
  nn.nearest = NearestRound::kRoundPreferFloor;
  EXPECT_EQ(resize_tap(nn, 1, 2, 4, 2.0, 0, 1).index[0], 0);
  nn.nearest = NearestRound::kRoundPreferCeil;
  EXPECT_EQ(resize_tap(nn, 1, 2, 4, 2.0, 0, 1).index[0], 1);
  nn.nearest = NearestRound::kCeil;
  EXPECT_EQ(resize_tap(nn, 3, 2, 4, 2.0, 0, 1).index[0], 1);  // ceil(1.5) = 2, clamped to 1

  // Cubic weights sum to 1 (a = -0.75) and the kernel is 1 at 0, 0 at 1 and 2.
  EXPECT_EQ(resize_cubic_weight(-0.75, 0.0), 1.0);
  EXPECT_EQ(resize_cubic_weight(-0.75, 1.0), 0.0);
  EXPECT_EQ(resize_cubic_weight(-0.75, 2.0), 0.0);
  const double f = 0.3;
  const double sum = resize_cubic_weight(-0.75, 1 + f) + resize_cubic_weight(-0.75, f) +
                     resize_cubic_weight(-0.75, 1 - f) + resize_cubic_weight(-0.75, 2 - f);
  EXPECT_NEAR(sum, 1.0, 1e-12);
}

TEST(CudaResizeIndex, GeometryFindsEachTapsAxis) {
  ResizeGeometry g;
  g.rank = 4;
  const Dims out = {1, 2, 9, 4};
  int64_t off = 0;
  for (int d = 0; d < 4; ++d) {
    g.out_dims[d] = out[static_cast<size_t>(d)];
    g.tap_offset[d] = off;
    off += out[static_cast<size_t>(d)];
  }
  for (int64_t i = 0; i < off; ++i) {
    int axis;
    int64_t x;
    g.tap_position(i, axis, x);
    ASSERT_GE(x, 0);
    ASSERT_LT(x, out[static_cast<size_t>(axis)]);
    EXPECT_EQ(g.tap_offset[axis] + x, i);
  }
  // A size-0 axis is never an entry's axis.
  g.out_dims[1] = 0;
  g.tap_offset[2] = 1;
  g.tap_offset[3] = 10;
  int axis;
  int64_t x;
  g.tap_position(1, axis, x);
  EXPECT_EQ(axis, 2);
  EXPECT_EQ(x, 0);
}

}  // namespace
}  // namespace loom::cuda
