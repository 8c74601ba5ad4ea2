// cpu_onednn's host kernels (plugins/cpu_onednn/host_kernels/) on raw
// arrays, against plain loops: the geometry corners the models in the EP
// tests may not reach (padding on every side, stride 2, band offsets, a
// residual, a K that is no multiple of the vector width, one thread and
// several). The same kernels are checked inside whole partitions against
// the reference EP by the depthwise, pointwise and gemv cases of the EP tests.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "host_kernels/depthwise_3x3.h"
#include "host_kernels/gemv.h"
#include "host_kernels/pointwise_1x1.h"

namespace loom::onednn::host_kernels {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

void expect_near_all(const std::vector<float>& want, const std::vector<float>& got, const std::string& what) {
  ASSERT_EQ(want.size(), got.size()) << what;
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(want[i], got[i], 1e-4f * (1.f + std::fabs(want[i]))) << what << ": element " << i;
}

// Plain NHWC depthwise 3x3 with zero padding, bias and clamp.
std::vector<float> depthwise_reference(const std::vector<float>& in, const std::vector<float>& filters,
                                       const std::vector<float>& bias, int64_t n, const DepthwiseGeometry& g) {
  std::vector<float> out(static_cast<size_t>(n * g.out_h * g.out_w * g.c));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t oy = 0; oy < g.out_h; ++oy)
      for (int64_t ox = 0; ox < g.out_w; ++ox)
        for (int64_t c = 0; c < g.c; ++c) {
          float acc = bias[c];
          for (int64_t dy = 0; dy < 3; ++dy)
            for (int64_t dx = 0; dx < 3; ++dx) {
              const int64_t iy = oy * g.stride_y - g.pad_top + dy, ix = ox * g.stride_x - g.pad_left + dx;
              if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) continue;
              acc += in[((b * g.h + iy) * g.w + ix) * g.c + c] * filters[c * 9 + dy * 3 + dx];
            }
          out[((b * g.out_h + oy) * g.out_w + ox) * g.c + c] = std::min(std::max(acc, g.lo), g.hi);
        }
  return out;
}

struct DepthwiseCase {
  int64_t n, h, w, c, stride, pad;
  float lo, hi;
  int threads;
};

TEST(HostKernelDepthwise3x3, MatchesPlainLoops) {
  const std::vector<DepthwiseCase> cases = {
      {1, 7, 9, 16, 1, 1, -kInf, kInf, 1},  // padding on every side, strips and edges
      {2, 8, 8, 32, 2, 1, 0.f, 6.f, 2},     // stride 2, batch 2, Clip(0, 6)
      {1, 3, 3, 16, 1, 0, 0.f, kInf, 3},    // no interior strip of 8, more threads than rows
      {1, 12, 20, 48, 2, 0, -kInf, kInf, 2},
  };
  for (const DepthwiseCase& k : cases) {
    DepthwiseGeometry g{k.h, k.w, k.c, (k.h + 2 * k.pad - 3) / k.stride + 1, (k.w + 2 * k.pad - 3) / k.stride + 1,
                        k.stride, k.stride, k.pad, k.pad, k.lo, k.hi};
    const std::vector<float> in = random_floats(static_cast<size_t>(k.n * k.h * k.w * k.c), 1);
    const std::vector<float> filters = random_floats(static_cast<size_t>(k.c * 9), 2);
    const std::vector<float> bias = random_floats(static_cast<size_t>(k.c), 3);
    const std::vector<float> packed = pack_depthwise_3x3_filters(filters, k.c);
    std::vector<float> got(static_cast<size_t>(k.n * g.out_h * g.out_w * g.c));
    depthwise_3x3_rows_parallel(k.threads, in.data(), packed.data(), bias.data(), got.data(), g, 0, k.n * g.out_h);
    expect_near_all(depthwise_reference(in, filters, bias, k.n, g), got,
                    "depthwise " + std::to_string(k.h) + "x" + std::to_string(k.w) + "x" + std::to_string(k.c) +
                        " stride " + std::to_string(k.stride));
  }
}

TEST(HostKernelDepthwise3x3, ABandOfRowsLandsAtItsOffset) {
  // Rows [3, 6) of a 1x8x8x16 map into a buffer that starts at row 3.
  DepthwiseGeometry g{8, 8, 16, 8, 8, 1, 1, 1, 1, -kInf, kInf};
  const std::vector<float> in = random_floats(8 * 8 * 16, 4), filters = random_floats(16 * 9, 5),
                           bias = random_floats(16, 6);
  const std::vector<float> want = depthwise_reference(in, filters, bias, 1, g);
  const std::vector<float> packed = pack_depthwise_3x3_filters(filters, 16);
  g.out_first_row = 3;
  std::vector<float> band(3 * 8 * 16);
  depthwise_3x3_rows(in.data(), packed.data(), bias.data(), band.data(), g, 3, 6);
  expect_near_all(std::vector<float>(want.begin() + 3 * 8 * 16, want.begin() + 6 * 8 * 16), band, "band of rows 3-5");
}

// Plain out[m][j] = clamp(bias[j] + sum_k in[m][k] w[k][j] + residual[m][j]).
std::vector<float> pointwise_reference(const std::vector<float>& in, const std::vector<float>& w,
                                       const std::vector<float>& bias, const std::vector<float>* residual,
                                       int64_t pixels, const PointwiseGeometry& g) {
  std::vector<float> out(static_cast<size_t>(pixels * g.n));
  for (int64_t m = 0; m < pixels; ++m)
    for (int64_t j = 0; j < g.n; ++j) {
      float acc = bias[j];
      for (int64_t k = 0; k < g.k; ++k) acc += in[m * g.k + k] * w[k * g.n + j];
      if (residual != nullptr) acc += (*residual)[m * g.n + j];
      out[m * g.n + j] = std::min(std::max(acc, g.lo), g.hi);
    }
  return out;
}

bool has_avx512() { return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma"); }

TEST(HostKernelPointwise1x1, NarrowAndExpansionKernelsMatchPlainLoops) {
  if (!has_avx512()) GTEST_SKIP() << "the 1x1 kernels are built only where the CPU has AVX-512";
  // (k, n): narrow outputs 8 / 16 / 24 / 40, expansions of 6, 4, 3, 2 and 1 vectors.
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{96, 8},  {32, 16}, {144, 24}, {40, 40},
                                                           {16, 96}, {24, 64}, {8, 48},   {32, 32}, {3, 16}};
  const int64_t pixels = 8 * 3 + 5;  // whole tiles of every row count, then a remainder
  for (const auto& [k, n] : shapes) {
    const auto kernels = pointwise_kernels_for(k, n);
    ASSERT_TRUE(kernels.has_value()) << k << " -> " << n;
    const PointwiseGeometry g{k, n, -0.5f, kInf};
    const std::vector<float> in = random_floats(static_cast<size_t>(pixels * k), 7);
    const std::vector<float> w = random_floats(static_cast<size_t>(k * n), 8);
    const std::vector<float> bias = random_floats(static_cast<size_t>(n), 9);
    const std::vector<float> residual = random_floats(static_cast<size_t>(pixels * n), 10);
    std::vector<float> got(static_cast<size_t>(pixels * n));
    kernels->second.plain(in.data(), w.data(), bias.data(), nullptr, got.data(), g, 0, pixels);
    expect_near_all(pointwise_reference(in, w, bias, nullptr, pixels, g), got,
                    std::to_string(k) + " -> " + std::to_string(n));
    kernels->second.residual(in.data(), w.data(), bias.data(), residual.data(), got.data(), g, 0, pixels);
    expect_near_all(pointwise_reference(in, w, bias, &residual, pixels, g), got,
                    std::to_string(k) + " -> " + std::to_string(n) + " with a residual");
  }
  EXPECT_FALSE(pointwise_kernels_for(128, 64).has_value()) << "an expansion takes at most 64 input channels";
  EXPECT_FALSE(pointwise_kernels_for(32, 72).has_value()) << "outputs must be whole vectors";
}

TEST(HostKernelPointwise1x1, SmallMapChunksMatchPlainLoops) {
  if (!has_avx512()) GTEST_SKIP() << "the 1x1 kernels are built only where the CPU has AVX-512";
  for (const int64_t n : {int64_t{64}, int64_t{96}}) {
    const int64_t k = 80, pixels = 7 * 7;
    const auto kernels = pointwise_chunk_kernels_for(k, n, pixels);
    ASSERT_TRUE(kernels.has_value()) << n;
    const int64_t chunks = n / kernels->chunk_channels;
    const std::vector<float> w = random_floats(static_cast<size_t>(k * n), 11);
    // [chunk][k][chunk_channels], as the builder packs them.
    std::vector<float> packed(w.size());
    for (int64_t c = 0; c < chunks; ++c)
      for (int64_t kk = 0; kk < k; ++kk)
        for (int64_t j = 0; j < kernels->chunk_channels; ++j)
          packed[(c * k + kk) * kernels->chunk_channels + j] = w[kk * n + c * kernels->chunk_channels + j];
    const PointwiseGeometry g{k, n, -kInf, 1.f};
    const std::vector<float> in = random_floats(static_cast<size_t>(pixels * k), 12);
    const std::vector<float> bias = random_floats(static_cast<size_t>(n), 13);
    std::vector<float> got(static_cast<size_t>(pixels * n));
    kernels->plain(in.data(), packed.data(), bias.data(), nullptr, got.data(), g, 0, pixels, 0, chunks);
    expect_near_all(pointwise_reference(in, w, bias, nullptr, pixels, g), got, "small map -> " + std::to_string(n));
  }
  EXPECT_FALSE(pointwise_chunk_kernels_for(80, 64, 14 * 14 * 2).has_value()) << "at most 256 pixels";
}

TEST(HostKernelGemv, MatchesPlainLoops) {
  // K no multiple of 16, N no multiple of the 16-row blocks; vector, scalar and no bias.
  const int64_t k = 131, n = 37;
  const std::vector<float> x = random_floats(static_cast<size_t>(k), 14);
  const std::vector<float> wt = random_floats(static_cast<size_t>(k * n), 15);  // [n][k]
  const std::vector<float> bias = random_floats(static_cast<size_t>(n), 16);
  for (const int bias_kind : {0, 1, 2})
    for (const int threads : {1, 3}) {
      std::vector<float> want(static_cast<size_t>(n)), got(static_cast<size_t>(n));
      for (int64_t j = 0; j < n; ++j) {
        float s = 0.f;
        for (int64_t i = 0; i < k; ++i) s += wt[j * k + i] * x[i];
        want[j] = s + (bias_kind == 1 ? bias[j] : bias_kind == 2 ? bias[0] : 0.f);
      }
      gemv(threads, x.data(), wt.data(), bias_kind == 0 ? nullptr : bias.data(), bias_kind == 2, got.data(), k, n);
      expect_near_all(want, got, "gemv, bias kind " + std::to_string(bias_kind) + ", " + std::to_string(threads) +
                                     " thread(s)");
    }
}

}  // namespace
}  // namespace loom::onednn::host_kernels
