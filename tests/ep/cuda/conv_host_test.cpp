// Host-side helpers of the CUDA EP's convolution and pooling kernels, on
// the CPU: the SDK's window geometry (loom/sdk/window.h, as the kernels
// call it) against hand-computed cases, the cuDNN plans (pre-pad for asymmetric pads, unpadded run +
// crop for ConvTranspose) against naive 1-D convolutions, the window copy
// and pooling taps against naive loops, the cuDNN shape lifting and the
// algorithm cache key.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "kernels/conv_geometry.h"
#include "kernels/conv_index.h"
#include "loom/sdk/window.h"

namespace loom {
namespace {

using cuda::AutoPad;
using cuda::Dims;
using cuda::WindowAttrs;

WindowAttrs attrs(Dims strides, Dims pads, AutoPad auto_pad = AutoPad::kNotSet, bool ceil_mode = false,
                  Dims dilations = {}) {
  WindowAttrs a;
  a.strides = std::move(strides);
  a.pads = std::move(pads);
  a.auto_pad = auto_pad;
  a.ceil_mode = ceil_mode;
  a.dilations = std::move(dilations);
  return a;
}

// The SDK's resolution as the CUDA kernels call it.
cuda::Window resolve(const WindowAttrs& a, const Dims& in, const Dims& kernel) {
  return sdk::resolve_window(a, in, kernel, "cuda Conv");
}
cuda::TransposeWindow resolve_transpose(const cuda::TransposeAttrs& t, const Dims& in, const Dims& kernel) {
  return sdk::resolve_conv_transpose(t, in, kernel, "cuda ConvTranspose");
}

TEST(CudaConvHost, ForwardWindowSizes) {
  auto g = resolve(attrs({2}, {1, 1}), {5}, {3});
  EXPECT_EQ(g.out, Dims{3});
  // ceil_mode adds a window only where it starts inside input + leading pad.
  g = resolve(attrs({2}, {0, 0}, AutoPad::kNotSet, true), {6}, {3});
  EXPECT_EQ(g.out, Dims{3});
  g = resolve(attrs({2}, {0, 0}, AutoPad::kNotSet, false), {6}, {3});
  EXPECT_EQ(g.out, Dims{2});
  g = resolve(attrs({2}, {1, 1}, AutoPad::kNotSet, true), {5}, {2});
  EXPECT_EQ(g.out, Dims{3});  // the 4th window would start in the trailing pad
  // SAME: out = ceil(in / stride), the odd pad at the end (UPPER) or start (LOWER).
  g = resolve(attrs({2}, {}, AutoPad::kSameUpper), {6}, {3});
  EXPECT_EQ(g.out, Dims{3});
  EXPECT_EQ(g.pad_begin, Dims{0});
  EXPECT_EQ(g.pad_end, Dims{1});
  g = resolve(attrs({2}, {}, AutoPad::kSameLower), {6}, {3});
  EXPECT_EQ(g.pad_begin, Dims{1});
  EXPECT_EQ(g.pad_end, Dims{0});
  g = resolve(attrs({1, 1}, {}, AutoPad::kSameUpper, false, {2, 1}), {7, 4}, {3, 2});
  EXPECT_EQ(g.out, (Dims{7, 4}));
  EXPECT_EQ(g.pad_begin, (Dims{2, 0}));
  EXPECT_EQ(g.pad_end, (Dims{2, 1}));
  // VALID ignores pads.
  g = resolve(attrs({2}, {1, 1}, AutoPad::kValid), {7}, {3});
  EXPECT_EQ(g.out, Dims{3});
  EXPECT_EQ(g.pad_begin, Dims{0});
  // Defaults: strides and dilations 1, no pads; kernel_shape from the attribute.
  WindowAttrs pool;
  pool.kernel = {2, 3};
  g = resolve(pool, {4, 5}, {});
  EXPECT_EQ(g.out, (Dims{3, 3}));
}

TEST(CudaConvHost, ForwardWindowErrors) {
  EXPECT_THROW(resolve(attrs({1}, {0, 0}), {2}, {3}), sdk::Error);
  EXPECT_THROW(resolve(attrs({0}, {0, 0}), {5}, {3}), sdk::Error);
  EXPECT_THROW(resolve(attrs({1}, {-1, 0}), {5}, {3}), sdk::Error);
  EXPECT_THROW(resolve(attrs({1}, {0}), {5}, {3}), sdk::Error);
  EXPECT_THROW(resolve(attrs({1, 1}, {}), {5}, {3}), sdk::Error);
  WindowAttrs a;
  a.kernel = {2};
  EXPECT_THROW(resolve(a, {5}, {3}), sdk::Error);  // kernel_shape disagrees with W
  EXPECT_THROW(resolve(attrs({1}, {0, 0}), {5}, {INT64_MAX}), sdk::Error);
  EXPECT_THROW(sdk::parse_auto_pad("SAME", "cuda Conv"), sdk::Error);
  EXPECT_EQ(sdk::parse_auto_pad("", "cuda Conv"), AutoPad::kNotSet);
}

cuda::TransposeAttrs transpose_attrs(Dims strides, Dims pads, Dims output_padding = {}, Dims output_shape = {},
                                     AutoPad auto_pad = AutoPad::kNotSet, Dims dilations = {}) {
  cuda::TransposeAttrs t;
  t.window = attrs(std::move(strides), std::move(pads), auto_pad, false, std::move(dilations));
  t.output_padding = std::move(output_padding);
  t.output_shape = std::move(output_shape);
  return t;
}

TEST(CudaConvHost, TransposeWindowSizes) {
  auto g = resolve_transpose(transpose_attrs({2}, {}), {3}, {2});
  EXPECT_EQ(g.out, Dims{6});
  g = resolve_transpose(transpose_attrs({2}, {1, 1}, {1}), {3}, {3});
  EXPECT_EQ(g.out, Dims{6});  // 2 * 2 + 1 + 3 - 2
  // output_shape fixes the size; pads follow, extra at the start unless SAME_UPPER.
  g = resolve_transpose(transpose_attrs({2}, {}, {}, {1, 1, 8}), {3}, {3});
  EXPECT_EQ(g.out, Dims{8});
  EXPECT_EQ(g.pad_begin, Dims{0});
  EXPECT_EQ(g.pad_end, Dims{-1});
  g = resolve_transpose(transpose_attrs({2}, {}, {}, {}, AutoPad::kSameUpper), {3}, {3});
  EXPECT_EQ(g.out, Dims{6});
  EXPECT_EQ(g.pad_begin, Dims{0});
  EXPECT_EQ(g.pad_end, Dims{1});
  g = resolve_transpose(transpose_attrs({2}, {}, {}, {}, AutoPad::kSameLower), {3}, {3});
  EXPECT_EQ(g.pad_begin, Dims{1});
  EXPECT_EQ(g.pad_end, Dims{0});
  g = resolve_transpose(transpose_attrs({2}, {}, {}, {}, AutoPad::kValid, {2}), {3}, {3});
  EXPECT_EQ(g.out, Dims{9});
  EXPECT_THROW(resolve_transpose(transpose_attrs({2}, {4, 4}), {3}, {2}), sdk::Error);
  EXPECT_THROW(resolve_transpose(transpose_attrs({2, 2}, {}), {3}, {2}), sdk::Error);
}

// ONNX ConvTranspose in 1-D, straight from its definition: input i, tap k
// land on y[i * s + k * d - pad_begin].
std::vector<double> naive_transpose(const std::vector<double>& x, const std::vector<double>& w,
                                    const cuda::TransposeWindow& g) {
  std::vector<double> y(static_cast<size_t>(g.out[0]), 0.0);
  for (int64_t i = 0; i < g.in[0]; ++i)
    for (int64_t k = 0; k < g.kernel[0]; ++k) {
      const int64_t o = i * g.strides[0] + k * g.dilations[0] - g.pad_begin[0];
      if (o >= 0 && o < g.out[0]) y[static_cast<size_t>(o)] += x[static_cast<size_t>(i)] * w[static_cast<size_t>(k)];
    }
  return y;
}

// cuDNN's backward data in 1-D: dx (size `size`) is the adjoint of the
// forward convolution of dx with symmetric `pad`.
std::vector<double> naive_backward_data(const std::vector<double>& dy, const std::vector<double>& w, int64_t size,
                                        int64_t pad, int64_t s, int64_t d) {
  std::vector<double> dx(static_cast<size_t>(size), 0.0);
  for (size_t i = 0; i < dy.size(); ++i)
    for (size_t k = 0; k < w.size(); ++k) {
      const int64_t j = static_cast<int64_t>(i) * s - pad + static_cast<int64_t>(k) * d;
      if (j >= 0 && j < size) dx[static_cast<size_t>(j)] += dy[i] * w[k];
    }
  return dx;
}

// The forward convolution of x (size in) with symmetric pad gives floor((in
// + 2 pad - extent) / s) + 1 outputs: cuDNN's consistency rule.
int64_t forward_size(int64_t in, int64_t pad, int64_t k, int64_t s, int64_t d) {
  return (in + 2 * pad - ((k - 1) * d + 1)) / s + 1;
}

TEST(CudaConvHost, TransposePlanMatchesDefinition) {
  int checked = 0;
  for (int64_t in = 1; in <= 4; ++in)
    for (int64_t k = 1; k <= 3; ++k)
      for (int64_t s = 1; s <= 3; ++s)
        for (int64_t d = 1; d <= 2; ++d)
          for (int64_t pb = 0; pb <= 2; ++pb)
            for (int64_t pe = 0; pe <= 2; ++pe)
              for (int64_t op = 0; op < s; ++op)
                for (int mode = 0; mode < 4; ++mode) {
                  cuda::TransposeAttrs t = transpose_attrs({s}, {pb, pe}, {op}, {}, AutoPad::kNotSet, {d});
                  if (mode == 1) t.window.auto_pad = AutoPad::kSameUpper;
                  if (mode == 2) t.window.auto_pad = AutoPad::kSameLower;
                  if (mode == 3) t.output_shape = {in * s + pb - pe + 1};  // may exceed the full size
                  cuda::TransposeWindow g;
                  try {
                    g = resolve_transpose(t, {in}, {k});
                  } catch (const sdk::Error&) {
                    continue;  // negative output size
                  }
                  if (g.out[0] == 0) continue;
                  std::vector<double> x, w;
                  for (int64_t i = 0; i < in; ++i) x.push_back(1.0 + static_cast<double>(i) * 0.37);
                  for (int64_t i = 0; i < k; ++i) w.push_back(0.5 - static_cast<double>(i) * 0.21);
                  const std::vector<double> want = naive_transpose(x, w, g);
                  const cuda::TransposePlan plan = cuda::plan_conv_transpose(g);
                  ASSERT_EQ(forward_size(plan.full[0], plan.pads[0], k, s, d), in) << "cuDNN would reject the dims";
                  const std::vector<double> full = naive_backward_data(x, w, plan.full[0], plan.pads[0], s, d);
                  std::vector<double> got = full;
                  if (!plan.direct) {
                    const cuda::WindowCopy c = cuda::make_window_copy(g.out, plan.full, plan.crop_begin);
                    got.assign(static_cast<size_t>(g.out[0]), 0.0);
                    for (int64_t o = 0; o < g.out[0]; ++o) {
                      const int64_t src = c.source(o);
                      got[static_cast<size_t>(o)] = src < 0 ? 0.0 : full[static_cast<size_t>(src)];
                    }
                  } else {
                    EXPECT_EQ(plan.full, g.out);
                  }
                  ASSERT_EQ(got.size(), want.size());
                  for (size_t i = 0; i < want.size(); ++i)
                    ASSERT_NEAR(got[i], want[i], 1e-12)
                        << "in " << in << " k " << k << " s " << s << " d " << d << " pads " << pb << "," << pe
                        << " op " << op << " mode " << mode << " at " << i;
                  ++checked;
                }
  EXPECT_GT(checked, 1000);
}

// ONNX Conv in 1-D with pads (pb, pe), from its definition.
std::vector<double> naive_conv(const std::vector<double>& x, const std::vector<double>& w, int64_t out, int64_t pb,
                               int64_t s, int64_t d) {
  std::vector<double> y(static_cast<size_t>(out), 0.0);
  for (int64_t o = 0; o < out; ++o)
    for (size_t k = 0; k < w.size(); ++k) {
      const int64_t i = o * s - pb + static_cast<int64_t>(k) * d;
      if (i >= 0 && i < static_cast<int64_t>(x.size())) y[static_cast<size_t>(o)] += x[static_cast<size_t>(i)] * w[k];
    }
  return y;
}

TEST(CudaConvHost, ForwardPlanMatchesDefinition) {
  int checked = 0;
  for (int64_t in = 1; in <= 6; ++in)
    for (int64_t k = 1; k <= 3; ++k)
      for (int64_t s = 1; s <= 3; ++s)
        for (int64_t d = 1; d <= 2; ++d)
          for (int64_t pb = 0; pb <= 4; ++pb)
            for (int64_t pe = 0; pe <= 4; ++pe)
              for (AutoPad ap : {AutoPad::kNotSet, AutoPad::kSameUpper, AutoPad::kSameLower, AutoPad::kValid}) {
                cuda::Window g;
                try {
                  g = resolve(attrs({s}, {pb, pe}, ap, false, {d}), {in}, {k});
                } catch (const sdk::Error&) {
                  continue;
                }
                std::vector<double> x, w;
                for (int64_t i = 0; i < in; ++i) x.push_back(1.0 + static_cast<double>(i) * 0.37);
                for (int64_t i = 0; i < k; ++i) w.push_back(0.5 - static_cast<double>(i) * 0.21);
                const std::vector<double> want = naive_conv(x, w, g.out[0], g.pad_begin[0], s, d);
                const cuda::ForwardPlan plan = cuda::plan_conv_forward(g);
                EXPECT_EQ(plan.pads[0] + plan.pre_begin[0], g.pad_begin[0]);
                EXPECT_EQ(plan.pads[0] + plan.pre_end[0], g.pad_end[0]);
                EXPECT_LT(plan.pads[0], (k - 1) * d + 1);
                // X copied into its pre-padded buffer, then cuDNN's symmetric convolution.
                const cuda::WindowCopy c = cuda::make_window_copy(plan.padded_in, {in}, plan.pre_begin);
                std::vector<double> padded(static_cast<size_t>(plan.padded_in[0]));
                for (int64_t i = 0; i < plan.padded_in[0]; ++i) {
                  const int64_t src = c.source(i);
                  padded[static_cast<size_t>(i)] = src < 0 ? 0.0 : x[static_cast<size_t>(src)];
                }
                ASSERT_EQ(forward_size(plan.padded_in[0], plan.pads[0], k, s, d), g.out[0]);
                const std::vector<double> got = naive_conv(padded, w, g.out[0], plan.pads[0], s, d);
                for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-12);
                ++checked;
              }
  EXPECT_GT(checked, 1000);
}

TEST(CudaConvHost, PlansChooseDirectWhereCudnnCan) {
  auto g = resolve(attrs({1, 1}, {1, 1, 1, 1}), {5, 5}, {3, 3});
  EXPECT_FALSE(cuda::plan_conv_forward(g).prepad);
  g = resolve(attrs({1, 1}, {0, 1, 1, 2}), {5, 5}, {3, 3});
  auto f = cuda::plan_conv_forward(g);
  EXPECT_TRUE(f.prepad);
  EXPECT_EQ(f.pads, (Dims{0, 1}));
  EXPECT_EQ(f.pre_begin, (Dims{0, 0}));
  EXPECT_EQ(f.pre_end, (Dims{1, 1}));
  EXPECT_EQ(f.padded_in, (Dims{6, 6}));
  // A pad as large as the kernel is pre-padded whole.
  g = resolve(attrs({1}, {2, 2}), {5}, {1});
  f = cuda::plan_conv_forward(g);
  EXPECT_EQ(f.pads, Dims{0});
  EXPECT_EQ(f.pre_begin, Dims{2});
  // PP-OCR's ConvTranspose: 2x2 stride 2, no pads: direct.
  auto t = resolve_transpose(transpose_attrs({2, 2}, {}), {7, 9}, {2, 2});
  EXPECT_TRUE(cuda::plan_conv_transpose(t).direct);
  t = resolve_transpose(transpose_attrs({2}, {1, 1}, {1}), {5}, {3});
  EXPECT_TRUE(cuda::plan_conv_transpose(t).direct);
  t = resolve_transpose(transpose_attrs({2}, {0, 1}), {5}, {3});
  auto p = cuda::plan_conv_transpose(t);
  EXPECT_FALSE(p.direct);
  EXPECT_EQ(p.full, Dims{11});
  EXPECT_EQ(p.crop_begin, Dims{0});
}

TEST(CudaConvHost, WindowCopyMatchesNaive) {
  const Dims in = {2, 3, 4}, out = {2, 5, 3}, begin = {0, 1, -1};
  const cuda::WindowCopy c = cuda::make_window_copy(out, in, begin);
  int64_t linear = 0;
  for (int64_t a = 0; a < out[0]; ++a)
    for (int64_t b = 0; b < out[1]; ++b)
      for (int64_t e = 0; e < out[2]; ++e, ++linear) {
        const int64_t ia = a - begin[0], ib = b - begin[1], ie = e - begin[2];
        const bool inside = ia >= 0 && ia < in[0] && ib >= 0 && ib < in[1] && ie >= 0 && ie < in[2];
        EXPECT_EQ(c.source(linear), inside ? (ia * in[1] + ib) * in[2] + ie : -1) << linear;
      }
  EXPECT_THROW(cuda::make_window_copy({1, 2}, {1}, {0}), std::invalid_argument);
}

// The reference EP's window_box loops (plugins/reference/kernels/nn_pool.cpp).
cuda::PoolTaps reference_taps(int64_t o, int64_t in, int64_t k, int64_t s, int64_t dil, int64_t pb, int64_t pe) {
  cuda::PoolTaps t;
  t.start = o * s - pb;
  int64_t lo = 0, hi = k, pad_hi = 0;
  while (lo < hi && t.start + lo * dil < 0) ++lo;
  while (hi > lo && t.start + (hi - 1) * dil >= in) --hi;
  while (pad_hi < k && t.start + pad_hi * dil < in + pe) ++pad_hi;
  t.lo = lo;
  t.hi = hi;
  t.padded = pad_hi;
  return t;
}

TEST(CudaConvHost, PoolTapsMatchReference) {
  int checked = 0;
  for (int64_t in = 1; in <= 7; ++in)
    for (int64_t k = 1; k <= 4; ++k)
      for (int64_t s = 1; s <= 3; ++s)
        for (int64_t dil = 1; dil <= 3; ++dil)
          for (int64_t pb = 0; pb <= 3; ++pb)
            for (int64_t pe = 0; pe <= 3; ++pe)
              for (bool ceil_mode : {false, true}) {
                WindowAttrs a = attrs({s}, {pb, pe}, AutoPad::kNotSet, ceil_mode, {dil});
                a.kernel = {k};
                cuda::Window g;
                try {
                  g = resolve(a, {in}, {});
                } catch (const sdk::Error&) {
                  continue;
                }
                const cuda::PoolGeometry pg = cuda::make_pool_geometry(g, 6);
                EXPECT_EQ(pg.planes, 6);
                EXPECT_EQ(pg.in[0], 1);
                EXPECT_EQ(pg.in[2], in);
                for (int64_t o = 0; o < g.out[0]; ++o) {
                  const cuda::PoolTaps want = reference_taps(o, in, k, s, dil, pb, pe);
                  const cuda::PoolTaps got = cuda::pool_taps(pg, 2, o);
                  ASSERT_EQ(got.start, want.start);
                  ASSERT_EQ(got.lo, want.lo) << in << " " << k << " " << s << " " << dil << " " << pb << " " << pe;
                  ASSERT_EQ(got.hi, want.hi) << in << " " << k << " " << s << " " << dil << " " << pb << " " << pe;
                  ASSERT_EQ(got.padded, want.padded);
                  // The lifted dims are single taps.
                  const cuda::PoolTaps lead = cuda::pool_taps(pg, 0, 0);
                  ASSERT_EQ(lead.hi - lead.lo, 1);
                  ASSERT_EQ(lead.padded, 1);
                  ++checked;
                }
              }
  EXPECT_GT(checked, 1000);
  cuda::Window four;
  four.in = four.out = four.kernel = four.strides = four.dilations = four.pad_begin = four.pad_end = Dims(4, 1);
  EXPECT_THROW(cuda::make_pool_geometry(four, 1), std::out_of_range);
}

TEST(CudaConvHost, CudnnShapeLiftsOneDim) {
  const auto s = cuda::cudnn_conv_shape({2, 4, 9}, {6, 2, 3}, {2, 6, 4}, {1}, {2}, {1}, 2, 1);
  EXPECT_EQ(s.nb_dims, 4);
  EXPECT_EQ((std::vector<int>(s.x, s.x + 4)), (std::vector<int>{2, 4, 1, 9}));
  EXPECT_EQ((std::vector<int>(s.w, s.w + 4)), (std::vector<int>{6, 2, 1, 3}));
  EXPECT_EQ((std::vector<int>(s.y, s.y + 4)), (std::vector<int>{2, 6, 1, 4}));
  EXPECT_EQ((std::vector<int>(s.pads, s.pads + 2)), (std::vector<int>{0, 1}));
  EXPECT_EQ((std::vector<int>(s.strides, s.strides + 2)), (std::vector<int>{1, 2}));
  EXPECT_EQ(s.groups, 2);
  const auto s3 =
      cuda::cudnn_conv_shape({1, 2, 3, 4, 5}, {2, 2, 1, 1, 1}, {1, 2, 3, 4, 5}, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}, 1, 1);
  EXPECT_EQ(s3.nb_dims, 5);
  EXPECT_EQ(s3.x[4], 5);
  EXPECT_THROW(cuda::cudnn_conv_shape({1, 1, int64_t{1} << 32}, {1, 1, 1}, {1, 1, 1}, {0}, {1}, {1}, 1, 1),
               std::out_of_range);
  EXPECT_THROW(cuda::cudnn_conv_shape({1, 1 << 16, 1 << 16}, {1, 1 << 16, 1}, {1, 1, 1 << 16}, {0}, {1}, {1}, 1, 1),
               std::out_of_range);
  EXPECT_THROW(cuda::cudnn_conv_shape({1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1}, {0, 0, 0, 0},
                                      {1, 1, 1, 1}, {1, 1, 1, 1}, 1, 1),
               std::invalid_argument);
}

// When cuDNN's fused convolution replaces the epilogue pass, and the bias
// descriptor it gets.
TEST(CudaConvHost, FusedCallRulesAndBiasDescriptor) {
  EXPECT_TRUE(cuda::cudnn_can_fuse(LOOM_DTYPE_FLOAT, true, true, false, false));
  EXPECT_TRUE(cuda::cudnn_can_fuse(LOOM_DTYPE_FLOAT, true, false, true, true));
  EXPECT_FALSE(cuda::cudnn_can_fuse(LOOM_DTYPE_FLOAT, true, false, true, false)) << "identity needs PRECOMP_GEMM";
  EXPECT_FALSE(cuda::cudnn_can_fuse(LOOM_DTYPE_FLOAT, true, false, false, true)) << "another activation";
  EXPECT_FALSE(cuda::cudnn_can_fuse(LOOM_DTYPE_FLOAT, false, true, false, true)) << "no bias";
  EXPECT_TRUE(cuda::cudnn_can_fuse(LOOM_DTYPE_FLOAT16, true, true, false, true)) << "PSEUDO_HALF_CONFIG";
  EXPECT_FALSE(cuda::cudnn_can_fuse(LOOM_DTYPE_DOUBLE, true, true, false, true)) << "float32 and float16 only";
  const auto s = cuda::cudnn_conv_shape({2, 4, 9, 7}, {6, 4, 3, 3}, {2, 6, 7, 5}, {0, 0}, {1, 1}, {1, 1}, 1, 1);
  int dims[5] = {}, strides[5] = {};
  cuda::cudnn_bias_dims(s, dims, strides);
  EXPECT_EQ((std::vector<int>(dims, dims + 4)), (std::vector<int>{1, 6, 1, 1}));
  EXPECT_EQ((std::vector<int>(strides, strides + 4)), (std::vector<int>{6, 1, 1, 1}));
  const auto lifted = cuda::cudnn_conv_shape({2, 4, 9}, {6, 2, 3}, {2, 6, 4}, {1}, {2}, {1}, 2, 1);
  cuda::cudnn_bias_dims(lifted, dims, strides);
  EXPECT_EQ((std::vector<int>(dims, dims + 4)), (std::vector<int>{1, 6, 1, 1})) << "1-D convolutions are lifted to 2-D";
}

TEST(CudaConvHost, ChoiceKeyNamesEverySetting) {
  const auto base = cuda::cudnn_conv_shape({2, 4, 9, 9}, {6, 2, 3, 3}, {2, 6, 9, 9}, {1, 1}, {1, 1}, {1, 1}, 2, 1);
  const std::string k = cuda::conv_choice_key("fwd", base, 3, false);
  EXPECT_EQ(k, cuda::conv_choice_key("fwd", base, 3, false));
  EXPECT_NE(k, cuda::conv_choice_key("bwd_data", base, 3, false));
  EXPECT_NE(k, cuda::conv_choice_key("fwd", base, 1, false));
  EXPECT_NE(k, cuda::conv_choice_key("fwd", base, 3, true));
  auto changed = [&](auto edit) {
    cuda::CudnnConvShape s = base;
    edit(s);
    return cuda::conv_choice_key("fwd", s, 3, false);
  };
  EXPECT_NE(k, changed([](cuda::CudnnConvShape& s) { s.dtype = 10; }));
  EXPECT_NE(k, changed([](cuda::CudnnConvShape& s) { s.x[3] = 10; }));
  EXPECT_NE(k, changed([](cuda::CudnnConvShape& s) { s.w[0] = 4; }));
  EXPECT_NE(k, changed([](cuda::CudnnConvShape& s) { s.y[2] = 8; }));
  EXPECT_NE(k, changed([](cuda::CudnnConvShape& s) { s.pads[0] = 0; }));
  EXPECT_NE(k, changed([](cuda::CudnnConvShape& s) { s.strides[1] = 2; }));
  EXPECT_NE(k, changed([](cuda::CudnnConvShape& s) { s.dilations[0] = 2; }));
  EXPECT_NE(k, changed([](cuda::CudnnConvShape& s) { s.groups = 1; }));
}

}  // namespace
}  // namespace loom
