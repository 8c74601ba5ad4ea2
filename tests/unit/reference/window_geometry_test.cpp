// The SDK's sliding-window geometry (loom/sdk/window.h), which the
// reference, cpu_onednn and cuda EPs share: forward windows (Conv, pools)
// under explicit pads, every auto_pad, ceil_mode, dilations and 1-D to 3-D;
// ConvTranspose under output_padding, output_shape and auto_pad; and
// hostile attributes failing with an INVALID_ARGUMENT error naming the op.
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "loom/sdk/window.h"

namespace loom {
namespace {

using Dims = std::vector<int64_t>;
using sdk::AutoPad;

constexpr int64_t kMax = INT64_MAX;
constexpr int64_t k2e62 = int64_t{1} << 62;

sdk::WindowAttrs attrs(Dims strides, Dims pads, AutoPad auto_pad = AutoPad::kNotSet, bool ceil_mode = false,
                       Dims dilations = {}, Dims kernel = {}) {
  sdk::WindowAttrs a;
  a.strides = std::move(strides);
  a.pads = std::move(pads);
  a.auto_pad = auto_pad;
  a.ceil_mode = ceil_mode;
  a.dilations = std::move(dilations);
  a.kernel = std::move(kernel);
  return a;
}

sdk::Window conv(const sdk::WindowAttrs& a, const Dims& in, const Dims& kernel) {
  return sdk::resolve_window(a, in, kernel, "Conv");
}

sdk::TransposeAttrs transpose(Dims strides, Dims pads, Dims output_padding = {}, Dims output_shape = {},
                              AutoPad auto_pad = AutoPad::kNotSet, Dims dilations = {}) {
  sdk::TransposeAttrs t;
  t.window = attrs(std::move(strides), std::move(pads), auto_pad, false, std::move(dilations));
  t.output_padding = std::move(output_padding);
  t.output_shape = std::move(output_shape);
  return t;
}

sdk::TransposeWindow conv_transpose(const sdk::TransposeAttrs& t, const Dims& in, const Dims& kernel) {
  return sdk::resolve_conv_transpose(t, in, kernel, "ConvTranspose");
}

// f() throws an INVALID_ARGUMENT sdk::Error whose message starts with `op`.
void expect_invalid(const std::function<void()>& f, const std::string& op, const std::string& label) {
  try {
    f();
    ADD_FAILURE() << label << ": accepted";
  } catch (const sdk::Error& e) {
    EXPECT_EQ(e.code(), LOOM_STATUS_INVALID_ARGUMENT) << label << ": " << e.what();
    EXPECT_EQ(std::string(e.what()).rfind(op + ": ", 0) == 0 || std::string(e.what()).rfind(op + " ", 0) == 0, true)
        << label << ": " << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << label << ": not an sdk::Error: " << e.what();
  }
}

TEST(WindowGeometry, ExplicitPads) {
  auto g = conv(attrs({2}, {1, 1}), {5}, {3});
  EXPECT_EQ(g.out, Dims{3});
  EXPECT_EQ(g.pad_begin, Dims{1});
  EXPECT_EQ(g.pad_end, Dims{1});
  // Asymmetric 2-D pads: [begin..., end...].
  g = conv(attrs({1, 1}, {0, 1, 2, 0}), {5, 6}, {3, 3});
  EXPECT_EQ(g.out, (Dims{5, 5}));
  EXPECT_EQ(g.pad_begin, (Dims{0, 1}));
  EXPECT_EQ(g.pad_end, (Dims{2, 0}));
  EXPECT_EQ(g.in, (Dims{5, 6}));
  EXPECT_EQ(g.rank(), 2u);
  // Defaults: strides and dilations 1, no pads; kernel_shape from the attribute.
  g = sdk::resolve_window(attrs({}, {}, AutoPad::kNotSet, false, {}, {2, 3}), {4, 5}, {}, "MaxPool");
  EXPECT_EQ(g.out, (Dims{3, 3}));
  EXPECT_EQ(g.strides, (Dims{1, 1}));
  EXPECT_EQ(g.dilations, (Dims{1, 1}));
  EXPECT_EQ(g.pad_begin, (Dims{0, 0}));
  // The kernel argument (W's dims) agrees with kernel_shape.
  g = conv(attrs({1}, {}, AutoPad::kNotSet, false, {}, {3}), {5}, {3});
  EXPECT_EQ(g.out, Dims{3});
  // A kernel exactly as long as the padded input gives one output.
  g = conv(attrs({4}, {1, 1}), {3}, {5});
  EXPECT_EQ(g.out, Dims{1});
}

TEST(WindowGeometry, AutoPadModes) {
  // VALID ignores pads.
  auto g = conv(attrs({2}, {1, 1}, AutoPad::kValid), {7}, {3});
  EXPECT_EQ(g.out, Dims{3});
  EXPECT_EQ(g.pad_begin, Dims{0});
  EXPECT_EQ(g.pad_end, Dims{0});
  // SAME: out = ceil(in / stride), the odd pad at the end (UPPER) or start (LOWER).
  g = conv(attrs({2}, {}, AutoPad::kSameUpper), {6}, {3});
  EXPECT_EQ(g.out, Dims{3});
  EXPECT_EQ(g.pad_begin, Dims{0});
  EXPECT_EQ(g.pad_end, Dims{1});
  g = conv(attrs({2}, {}, AutoPad::kSameLower), {6}, {3});
  EXPECT_EQ(g.out, Dims{3});
  EXPECT_EQ(g.pad_begin, Dims{1});
  EXPECT_EQ(g.pad_end, Dims{0});
  g = conv(attrs({1}, {}, AutoPad::kSameUpper), {5}, {4});
  EXPECT_EQ(g.out, Dims{5});
  EXPECT_EQ(g.pad_begin, Dims{1});
  EXPECT_EQ(g.pad_end, Dims{2});
  g = conv(attrs({1}, {}, AutoPad::kSameLower), {5}, {4});
  EXPECT_EQ(g.pad_begin, Dims{2});
  EXPECT_EQ(g.pad_end, Dims{1});
  // SAME ignores explicit pads; a total below zero is no padding.
  g = conv(attrs({3}, {4, 4}, AutoPad::kSameUpper), {7}, {1});
  EXPECT_EQ(g.out, Dims{3});
  EXPECT_EQ(g.pad_begin, Dims{0});
  EXPECT_EQ(g.pad_end, Dims{0});
  // An empty spatial dim gives an empty output under SAME.
  g = conv(attrs({2}, {}, AutoPad::kSameUpper), {0}, {3});
  EXPECT_EQ(g.out, Dims{0});
  // NOTSET and "" parse alike; unknown values fail naming the op.
  EXPECT_EQ(sdk::parse_auto_pad("", "Conv"), AutoPad::kNotSet);
  EXPECT_EQ(sdk::parse_auto_pad("NOTSET", "Conv"), AutoPad::kNotSet);
  EXPECT_EQ(sdk::parse_auto_pad("VALID", "Conv"), AutoPad::kValid);
  EXPECT_EQ(sdk::parse_auto_pad("SAME_UPPER", "Conv"), AutoPad::kSameUpper);
  EXPECT_EQ(sdk::parse_auto_pad("SAME_LOWER", "Conv"), AutoPad::kSameLower);
  EXPECT_FALSE(sdk::find_auto_pad("SAME").has_value());
  expect_invalid([] { sdk::parse_auto_pad("SAME", "AveragePool"); }, "AveragePool", "auto_pad SAME");
}

TEST(WindowGeometry, CeilMode) {
  auto pool = [](Dims strides, Dims pads, bool ceil_mode, Dims in, Dims kernel,
                 AutoPad auto_pad = AutoPad::kNotSet) {
    return sdk::resolve_window(attrs(std::move(strides), std::move(pads), auto_pad, ceil_mode, {}, std::move(kernel)),
                               in, {}, "MaxPool");
  };
  EXPECT_EQ(pool({2}, {0, 0}, false, {6}, {3}).out, Dims{2});
  EXPECT_EQ(pool({2}, {0, 0}, true, {6}, {3}).out, Dims{3});  // the last window starts at 4, inside
  // ONNX maxpool_2d_ceil: 4x4, kernel 3, stride 2.
  EXPECT_EQ(pool({2, 2}, {}, true, {4, 4}, {3, 3}).out, (Dims{2, 2}));
  EXPECT_EQ(pool({2, 2}, {}, false, {4, 4}, {3, 3}).out, (Dims{1, 1}));
  // Rounding up would add a 4th window starting at 6 = in + pad_begin: in
  // the trailing pad, so it is dropped.
  auto g = pool({2}, {1, 1}, true, {5}, {2});
  EXPECT_EQ(g.out, Dims{3});
  EXPECT_EQ(g.pad_end, Dims{1});  // pads are not widened
  // A window starting in the leading pad counts.
  EXPECT_EQ(pool({3}, {2, 0}, true, {5}, {2}).out, Dims{3});
  EXPECT_EQ(pool({3}, {2, 0}, false, {5}, {2}).out, Dims{2});
  // VALID rounds up alike (zero pads); SAME ignores ceil_mode.
  EXPECT_EQ(pool({2}, {}, true, {5}, {2}, AutoPad::kValid).out, Dims{3});
  EXPECT_EQ(pool({2}, {}, false, {5}, {2}, AutoPad::kValid).out, Dims{2});
  EXPECT_EQ(pool({2}, {}, true, {5}, {2}, AutoPad::kSameUpper).out, Dims{3});
  EXPECT_EQ(pool({2}, {}, true, {6}, {2}, AutoPad::kSameLower).out, Dims{3});
  // Where the division is exact, ceil_mode changes nothing.
  EXPECT_EQ(pool({2}, {}, true, {7}, {3}).out, Dims{3});
}

TEST(WindowGeometry, DilationsAndRanks) {
  auto g = conv(attrs({1}, {}, AutoPad::kNotSet, false, {2}), {7}, {3});
  EXPECT_EQ(g.out, Dims{3});  // extent 5
  g = conv(attrs({1}, {}, AutoPad::kSameUpper, false, {2}), {7}, {3});
  EXPECT_EQ(g.out, Dims{7});
  EXPECT_EQ(g.pad_begin, Dims{2});
  EXPECT_EQ(g.pad_end, Dims{2});
  g = conv(attrs({1, 1}, {}, AutoPad::kSameUpper, false, {2, 1}), {7, 4}, {3, 2});
  EXPECT_EQ(g.out, (Dims{7, 4}));
  EXPECT_EQ(g.pad_begin, (Dims{2, 0}));
  EXPECT_EQ(g.pad_end, (Dims{2, 1}));
  // 3-D, each dim on its own.
  g = conv(attrs({2, 1, 3}, {0, 1, 0, 1, 1, 2}, AutoPad::kNotSet, false, {1, 2, 1}), {4, 5, 6}, {2, 3, 1});
  EXPECT_EQ(g.out, (Dims{2, 3, 3}));
  EXPECT_EQ(g.pad_begin, (Dims{0, 1, 0}));
  EXPECT_EQ(g.pad_end, (Dims{1, 1, 2}));
  // Against the definition: output o covers [o * s - pb, o * s - pb + extent)
  // inside [-pb, in + pe).
  int checked = 0;
  for (int64_t in = 1; in <= 7; ++in)
    for (int64_t k = 1; k <= 3; ++k)
      for (int64_t s = 1; s <= 3; ++s)
        for (int64_t d = 1; d <= 3; ++d)
          for (int64_t pb = 0; pb <= 2; ++pb)
            for (int64_t pe = 0; pe <= 2; ++pe) {
              const int64_t extent = (k - 1) * d + 1;
              if (in + pb + pe < extent) continue;
              int64_t want = 0;
              while (want * s - pb + extent <= in + pe) ++want;
              EXPECT_EQ(conv(attrs({s}, {pb, pe}, AutoPad::kNotSet, false, {d}), {in}, {k}).out, Dims{want});
              ++checked;
            }
  EXPECT_GT(checked, 500);
}

TEST(WindowGeometry, ForwardErrorsNameTheOp) {
  expect_invalid([] { conv(attrs({1}, {0, 0}), {2}, {3}); }, "Conv", "kernel beyond the input");
  expect_invalid([] { conv(attrs({0}, {0, 0}), {5}, {3}); }, "Conv", "zero stride");
  expect_invalid([] { conv(attrs({-2}, {0, 0}), {5}, {3}); }, "Conv", "negative stride");
  expect_invalid([] { conv(attrs({1}, {}, AutoPad::kNotSet, false, {0}), {5}, {3}); }, "Conv", "zero dilation");
  expect_invalid([] { conv(attrs({1}, {}, AutoPad::kNotSet, false, {-3}), {5}, {3}); }, "Conv", "negative dilation");
  expect_invalid([] { conv(attrs({1}, {}), {5}, {0}); }, "Conv", "zero kernel");
  expect_invalid([] { conv(attrs({1}, {-1, 0}), {5}, {3}); }, "Conv", "negative pad");
  expect_invalid([] { conv(attrs({1}, {0}), {5}, {3}); }, "Conv", "one pad for one dim");
  expect_invalid([] { conv(attrs({1, 1}, {}), {5}, {3}); }, "Conv", "two strides for one dim");
  expect_invalid([] { conv(attrs({1}, {}, AutoPad::kNotSet, false, {1, 1}), {5}, {3}); }, "Conv", "two dilations");
  expect_invalid([] { conv(attrs({1}, {}), {5, 5}, {3}); }, "Conv", "kernel rank");
  expect_invalid([] { conv(attrs({1}, {}, AutoPad::kNotSet, false, {}, {2}), {5}, {3}); }, "Conv",
                 "kernel_shape disagrees with W");
  expect_invalid([] { sdk::resolve_window(attrs({1}, {}), {5}, {}, "MaxPool"); }, "MaxPool", "no kernel_shape");
  expect_invalid([] { conv(attrs({1}, {}), {-1}, {1}); }, "Conv", "negative spatial dim");
  // Hostile sizes overflow int64 on the way and are refused, not wrapped.
  expect_invalid([] { conv(attrs({1}, {0, 0}), {5}, {kMax}); }, "Conv", "kernel int64 max");
  expect_invalid([] { conv(attrs({1, 1}, {}, AutoPad::kNotSet, false, {k2e62, k2e62}), {3, 3}, {2, 2}); }, "Conv",
                 "dilation 2^62");
  expect_invalid([] { conv(attrs({1, 1}, {0, 0, kMax, kMax}), {3, 3}, {2, 2}); }, "Conv", "pads int64 max");
  expect_invalid([] { conv(attrs({1, 1}, {kMax, kMax, 0, 0}), {3, 3}, {2, 2}); }, "Conv", "begin pads int64 max");
  expect_invalid(
      [] { sdk::resolve_window(attrs({1, 1}, {0, 0, kMax, kMax}, AutoPad::kNotSet, true, {}, {2, 2}), {3, 3}, {},
                               "MaxPool"); },
      "MaxPool", "ceil_mode pads int64 max");
  expect_invalid([] { conv(attrs({kMax}, {}, AutoPad::kSameUpper), {kMax}, {2}); }, "Conv", "SAME int64 max");
  expect_invalid([] { sdk::resolve_window(attrs({1, 1}, {}, AutoPad::kSameLower, false, {k2e62, k2e62}, {k2e62, k2e62}),
                                          {3, 3}, {}, "AveragePool"); },
                 "AveragePool", "SAME kernel 2^62 x dilation 2^62");
  expect_invalid([] { conv(attrs({1}, {}, AutoPad::kSameUpper, false, {k2e62}), {3}, {3}); }, "Conv",
                 "SAME dilation 2^62");
  // The largest sizes that fit still resolve.
  const auto g = conv(attrs({kMax}, {}), {kMax}, {1});
  EXPECT_EQ(g.out, Dims{1});
}

TEST(WindowGeometry, TransposeSizes) {
  // full = stride * (in - 1) + output_padding + (kernel - 1) * dilation + 1.
  auto g = conv_transpose(transpose({2}, {}), {3}, {2});
  EXPECT_EQ(g.out, Dims{6});
  EXPECT_EQ(g.pad_begin, Dims{0});
  EXPECT_EQ(g.pad_end, Dims{0});
  g = conv_transpose(transpose({2}, {1, 1}, {1}), {3}, {3});
  EXPECT_EQ(g.out, Dims{6});  // 2 * 2 + 1 + 3 - 2
  EXPECT_EQ(g.output_padding, Dims{1});
  g = conv_transpose(transpose({1, 2}, {1, 0, 0, 1}), {3, 4}, {3, 2});
  EXPECT_EQ(g.out, (Dims{4, 7}));
  EXPECT_EQ(g.pad_begin, (Dims{1, 0}));
  EXPECT_EQ(g.pad_end, (Dims{0, 1}));
  // Negative explicit pads grow the output.
  g = conv_transpose(transpose({1}, {-1, 0}), {3}, {2});
  EXPECT_EQ(g.out, Dims{5});
  // VALID: the full size, pads ignored; dilations widen the kernel.
  g = conv_transpose(transpose({2}, {1, 1}, {}, {}, AutoPad::kValid, {2}), {3}, {3});
  EXPECT_EQ(g.out, Dims{9});
  EXPECT_EQ(g.pad_begin, Dims{0});
  // 3-D.
  g = conv_transpose(transpose({2, 1, 3}, {}, {1, 0, 2}), {2, 3, 1}, {1, 2, 2});
  EXPECT_EQ(g.out, (Dims{4, 4, 4}));
}

TEST(WindowGeometry, TransposeOutputShapeAndSame) {
  // output_shape fixes the size, with or without the N, C prefix; the pads
  // follow, the extra at the start unless SAME_UPPER. full = 7 here.
  for (const Dims& shape : {Dims{8}, Dims{1, 1, 8}}) {
    auto g = conv_transpose(transpose({2}, {}, {}, shape), {3}, {3});
    EXPECT_EQ(g.out, Dims{8});
    EXPECT_EQ(g.pad_begin, Dims{0});
    EXPECT_EQ(g.pad_end, Dims{-1});
    g = conv_transpose(transpose({2}, {}, {}, shape, AutoPad::kSameUpper), {3}, {3});
    EXPECT_EQ(g.pad_begin, Dims{-1});
    EXPECT_EQ(g.pad_end, Dims{0});
  }
  auto g = conv_transpose(transpose({2}, {5, 5}, {}, {6}), {3}, {3});  // explicit pads ignored
  EXPECT_EQ(g.out, Dims{6});
  EXPECT_EQ(g.pad_begin, Dims{1});
  EXPECT_EQ(g.pad_end, Dims{0});
  g = conv_transpose(transpose({2, 2}, {}, {}, {1, 2, 5, 7}), {3, 3}, {3, 3});
  EXPECT_EQ(g.out, (Dims{5, 7}));
  EXPECT_EQ(g.pad_begin, (Dims{1, 0}));
  EXPECT_EQ(g.pad_end, (Dims{1, 0}));
  // SAME_*: Y is in * stride.
  g = conv_transpose(transpose({2}, {}, {}, {}, AutoPad::kSameUpper), {3}, {3});
  EXPECT_EQ(g.out, Dims{6});
  EXPECT_EQ(g.pad_begin, Dims{0});
  EXPECT_EQ(g.pad_end, Dims{1});
  g = conv_transpose(transpose({2}, {}, {}, {}, AutoPad::kSameLower), {3}, {3});
  EXPECT_EQ(g.out, Dims{6});
  EXPECT_EQ(g.pad_begin, Dims{1});
  EXPECT_EQ(g.pad_end, Dims{0});
  g = conv_transpose(transpose({2}, {}, {1}, {}, AutoPad::kSameUpper), {3}, {2});
  EXPECT_EQ(g.out, Dims{6});
  EXPECT_EQ(g.pad_begin, Dims{0});
  EXPECT_EQ(g.pad_end, Dims{1});
  // floor_half rounds toward minus infinity, over the whole int64 range.
  EXPECT_EQ(sdk::floor_half(0), 0);
  EXPECT_EQ(sdk::floor_half(3), 1);
  EXPECT_EQ(sdk::floor_half(-1), -1);
  EXPECT_EQ(sdk::floor_half(-2), -1);
  EXPECT_EQ(sdk::floor_half(-3), -2);
  EXPECT_EQ(sdk::floor_half(INT64_MIN), INT64_MIN / 2);
  EXPECT_EQ(sdk::floor_half(kMax), kMax / 2);
}

TEST(WindowGeometry, TransposeErrorsNameTheOp) {
  const std::string op = "ConvTranspose";
  expect_invalid([] { conv_transpose(transpose({2}, {4, 4}), {3}, {2}); }, op, "negative output");
  expect_invalid([] { conv_transpose(transpose({2}, {}, {}, {-1}), {3}, {2}); }, op, "negative output_shape");
  expect_invalid([] { conv_transpose(transpose({2, 2}, {}), {3}, {2}); }, op, "two strides for one dim");
  expect_invalid([] { conv_transpose(transpose({2}, {}, {1, 1}), {3}, {2}); }, op, "output_padding length");
  expect_invalid([] { conv_transpose(transpose({2}, {}, {}, {1, 8}), {3}, {2}); }, op, "output_shape length");
  expect_invalid([] { conv_transpose(transpose({2}, {1}), {3}, {2}); }, op, "pads length");
  expect_invalid([] { conv_transpose(transpose({0}, {}), {3}, {2}); }, op, "zero stride");
  expect_invalid([] { conv_transpose(transpose({-1}, {}), {3}, {2}); }, op, "negative stride");
  expect_invalid([] { conv_transpose(transpose({1}, {}, {}, {}, AutoPad::kNotSet, {0}), {3}, {2}); }, op,
                 "zero dilation");
  expect_invalid([] { conv_transpose(transpose({1}, {}), {0}, {2}); }, op, "empty X");
  expect_invalid(
      [] {
        sdk::TransposeAttrs t = transpose({1}, {});
        t.window.kernel = {3};
        conv_transpose(t, {3}, {2});
      },
      op, "kernel_shape disagrees with W");
  // Hostile sizes.
  expect_invalid([] { conv_transpose(transpose({k2e62, k2e62}, {}), {3, 3}, {2, 2}); }, op, "stride 2^62");
  expect_invalid(
      [] { conv_transpose(transpose({1, 1}, {}, {}, {}, AutoPad::kNotSet, {k2e62, k2e62}), {3, 3}, {3, 3}); }, op,
      "dilation 2^62");
  expect_invalid([] { conv_transpose(transpose({1}, {kMax, kMax}), {3}, {2}); }, op, "pads int64 max");
  expect_invalid([] { conv_transpose(transpose({1}, {INT64_MIN, 0}), {3}, {2}); }, op, "pads int64 min");
  expect_invalid([] { conv_transpose(transpose({1}, {}, {kMax}), {3}, {2}); }, op, "output_padding int64 max");
  expect_invalid([] { conv_transpose(transpose({k2e62}, {}, {}, {}, AutoPad::kSameUpper), {4}, {1}); }, op,
                 "SAME stride 2^62");
  expect_invalid([] { conv_transpose(transpose({1}, {}, {-kMax}, {kMax}), {1}, {1}); }, op,
                 "output_shape int64 max");
}

}  // namespace
}  // namespace loom
