// QLinearConv on cpu_onednn vs the reference EP: u8 / s8 activations,
// per-tensor and per-channel weight scales, zero points, bias, groups,
// depthwise, strides and pads, 1x1, and the cases left to the reference EP.
#include <cstdint>
#include <optional>
#include <set>

#include "quantized_compare.h"

namespace loom::ep_testing {
namespace {

// --- QLinearConv ---

struct QConvCase {
  std::vector<int64_t> x;  // N, C, H, W
  int64_t out_channels, kernel, group;
  std::vector<int64_t> strides, pads;
  bool x_signed, y_signed, per_channel, bias;
  int32_t x_zero, y_zero;
};

// Weight scales and y_scale put the outputs' spread at about +-40 steps
// around y_zero, so rounding, zero points and saturation all matter.
std::string qlinear_conv_model(const QConvCase& c, int32_t w_zero = 0, bool constant_weights = true) {
  testing::ModelBuilder m;
  m.input("x", c.x_signed ? kS8 : kU8, c.x);
  const std::vector<int64_t> w = {c.out_channels, c.x[1] / c.group, c.kernel, c.kernel};
  const float x_scale = 0.02f;
  scalar_float(m, "x_scale", x_scale);
  m.int_initializer("x_zero", c.x_signed ? kS8 : kU8, {}, {c.x_zero});
  if (constant_weights)
    m.int_initializer("w", kS8, w, random_ints(static_cast<size_t>(count(w)), 11, -127, 127));
  else
    m.input("w", kS8, w);
  std::vector<float> w_scales = {0.004f};
  if (c.per_channel) w_scales = random_values(static_cast<size_t>(c.out_channels), 12, 0.002f, 0.008f);
  const std::vector<int64_t> scale_dims = c.per_channel ? std::vector<int64_t>{c.out_channels} : std::vector<int64_t>{};
  m.float_initializer("w_scale", scale_dims, w_scales);
  m.int_initializer("w_zero", kS8, scale_dims, std::vector<int32_t>(w_scales.size(), w_zero));
  const float fan_in = static_cast<float>(w[1] * c.kernel * c.kernel);
  scalar_float(m, "y_scale", x_scale * 0.004f * 73.f * 73.f * std::sqrt(fan_in) / 40.f);
  m.int_initializer("y_zero", c.y_signed ? kS8 : kU8, {}, {c.y_zero});
  std::vector<std::string> in = {"x", "x_scale", "x_zero", "w", "w_scale", "w_zero", "y_scale", "y_zero"};
  if (c.bias) {
    m.int_initializer("b", kS32, {c.out_channels}, random_ints(static_cast<size_t>(c.out_channels), 13, -3000, 3000));
    in.push_back("b");
  }
  auto& n = m.node("QLinearConv", in, {"y"});
  testing::add_int_attr(n, "group", c.group);
  if (!c.strides.empty()) add_ints_attr(n, "strides", c.strides);
  if (!c.pads.empty()) add_ints_attr(n, "pads", c.pads);
  m.output("y", c.y_signed ? kS8 : kU8, {});
  return m.bytes();
}

TEST(OnednnQLinearConv, MatchesReferenceAcrossCases) {
  const std::vector<QConvCase> cases = {
      // x, M, k, group, strides, pads, x_signed, y_signed, per_channel, bias, x_zero, y_zero
      {{1, 16, 8, 8}, 16, 3, 1, {}, {1, 1, 1, 1}, false, false, false, false, 0, 0},         // u8, all zero points 0
      {{1, 16, 8, 8}, 32, 3, 1, {}, {1, 1, 1, 1}, false, false, false, true, 128, 0},        // x zero point, bias
      {{2, 8, 9, 7}, 16, 3, 1, {1, 1}, {1, 1, 1, 1}, false, false, true, true, 120, 100},  // per-channel, both zps
      {{1, 16, 10, 10}, 24, 3, 1, {2, 2}, {1, 0, 2, 1}, false, true, true, false, 7, -5},  // strided, asym pads, s8 y
      {{1, 16, 9, 9}, 16, 3, 1, {}, {}, true, true, false, true, 0, 0},                    // s8 x, no padding
      {{1, 16, 9, 9}, 32, 3, 1, {1, 1}, {1, 1, 1, 1}, true, false, true, true, -3, 128},   // s8 x with zero point
      {{1, 8, 9, 9}, 12, 3, 4, {1, 1}, {1, 1, 1, 1}, false, false, true, true, 130, 128},  // grouped
      {{2, 32, 14, 14}, 32, 3, 32, {2, 2}, {1, 1, 1, 1}, false, false, true, true, 128, 128},  // depthwise
      {{1, 32, 14, 14}, 32, 3, 32, {1, 1}, {1, 1, 1, 1}, true, true, false, false, 5, 0},      // depthwise s8
      {{1, 64, 7, 7}, 48, 1, 1, {}, {}, false, false, true, true, 128, 128},                   // 1x1
      {{1, 64, 14, 14}, 32, 1, 1, {2, 2}, {}, true, false, false, true, 0, 64},                // 1x1 strided
      {{1, 3, 32, 32}, 16, 7, 1, {2, 2}, {3, 3, 3, 3}, false, false, true, true, 128, 0},      // a stem
  };
  for (size_t i = 0; i < cases.size(); ++i)
    expect_quantized_match(qlinear_conv_model(cases[i]), {{"x", int8_tensor(cases[i].x, cases[i].x_signed, 100 + i)}},
                           "qlinearconv case " + std::to_string(i));
}

// Inputs that are all the zero point: padding must read as zero after the
// shift (oneDNN compensates the zero point in the padded border too), so
// the result is the bias alone, everywhere.
TEST(OnednnQLinearConv, PaddingReadsTheZeroPoint) {
  const QConvCase c{{1, 16, 6, 6}, 16, 3, 1, {}, {1, 1, 1, 1}, false, false, true, true, 77, 3};
  std::vector<uint8_t> x(16 * 36, 77);
  expect_quantized_match(qlinear_conv_model(c), {{"x", Tensor::from_vector(DType::kUint8, {1, 16, 6, 6}, x)}},
                         "constant input");
}

// A second input shape builds a second program after the first released
// the host's copy of the weights: the weights are rebuilt from the packed
// copy, whose layout carries oneDNN's zero-point compensation.
TEST(OnednnQLinearConv, SecondShapeRebuildsWeightsFromThePackedCopy) {
  QConvCase c{{1, 16, -1, -1}, 32, 3, 1, {}, {1, 1, 1, 1}, false, false, true, true, 128, 120};
  const std::string model = qlinear_conv_model(c);
  auto onednn = make_session(onednn_env(), model);
  auto reference = make_session(reference_env(), model);
  ASSERT_TRUE(onednn && reference);
  for (int64_t hw : {8, 11, 8}) {
    const std::map<std::string, Tensor> in = {{"x", int8_tensor({1, 16, hw, hw}, false, 300 + static_cast<uint32_t>(hw))}};
    auto got = onednn->run(in);
    auto want = reference->run(in);
    ASSERT_TRUE(got.has_value() && want.has_value()) << hw;
    expect_within_one((*want)[0], (*got)[0], "size " + std::to_string(hw));
  }
}

// The cases oneDNN 2.6 cannot compute stay on the reference EP, with a reason.
TEST(OnednnQLinearConv, LeavesUnsupportedCasesToTheReference) {
  const QConvCase c{{1, 8, 6, 6}, 8, 3, 1, {}, {1, 1, 1, 1}, false, false, true, true, 128, 128};
  struct Decline {
    std::string model, reason;
  };
  const std::vector<Decline> declines = {
      {qlinear_conv_model(c, 3), "weight zero point"},
      {qlinear_conv_model(c, 0, false), "constant"},
  };
  auto env = environment({"cpu_onednn", "reference"}, FallbackPolicy::kAllow);
  for (const Decline& d : declines) {
    auto s = make_session(env, d.model);
    auto reference = make_session(reference_env(), d.model);
    ASSERT_TRUE(s && reference);
    ASSERT_EQ(s->placement().nodes.size(), 1u);
    EXPECT_EQ(s->placement().nodes[0].provider, "reference");
    EXPECT_NE(s->placement().nodes[0].reason.find(d.reason), std::string::npos) << s->placement().nodes[0].reason;
    std::map<std::string, Tensor> in = {{"x", int8_tensor(c.x, false, 1)}};
    if (d.reason == "constant") {
      std::vector<int8_t> w(8 * 8 * 9);
      for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int8_t>(static_cast<int>(i * 37 % 255) - 127);
      in["w"] = Tensor::from_vector(DType::kInt8, {8, 8, 3, 3}, w);
    }
    auto got = s->run(in);
    auto want = reference->run(in);
    ASSERT_TRUE(got.has_value() && want.has_value());
    expect_within_one((*want)[0], (*got)[0], d.reason);
  }
}

}  // namespace
}  // namespace loom::ep_testing
