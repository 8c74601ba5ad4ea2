// Quantized ops on cpu_onednn vs the reference EP: QLinearConv (u8 / s8
// activations, per-tensor and per-channel weight scales, zero points, bias,
// groups, depthwise, strides and pads, 1x1), QLinearMatMul (2-D, batched,
// per-column scales), QuantizeLinear / DequantizeLinear (per tensor and per
// axis), a Q/DQ chain in one partition, quantized residuals fused into the
// convolution (QLinearConv -> DQ -> Add(DQ(r)) -> [Relu] -> Q),
// com.microsoft MatMulIntegerToFloat (float outputs, close), and the cases
// the EP leaves to the reference EP.
//
// Tolerance for integer outputs: at most 1 step. Both EPs compute the same
// int32 accumulators and the same float requantization scale, and both
// round half to even, but oneDNN may form the float product in another
// order (bias and zero points folded in differently, or, for
// QuantizeLinear, x * (1 / scale) where ONNX divides): a value within an
// ulp of a .5 tie may then round the other way. Nearly all elements must
// match exactly (checked: at most 1% differ).
#include <cstdint>
#include <optional>
#include <set>

#include "ep_compare.h"

namespace loom::ep_testing {
namespace {

constexpr auto kU8 = ::onnx::TensorProto::UINT8;
constexpr auto kS8 = ::onnx::TensorProto::INT8;
constexpr auto kS32 = ::onnx::TensorProto::INT32;

void scalar_float(testing::ModelBuilder& m, const std::string& name, float v) { m.float_initializer(name, {}, {v}); }

// Deterministic integers in [lo, hi].
std::vector<int32_t> random_ints(size_t n, uint32_t seed, int32_t lo, int32_t hi) {
  std::vector<int32_t> out;
  for (float v : random_values(n, seed, 0.f, 1.f))
    out.push_back(std::min(hi, lo + static_cast<int32_t>(v * static_cast<float>(hi - lo + 1))));
  return out;
}

Tensor int8_tensor(const std::vector<int64_t>& dims, bool is_signed, uint32_t seed) {
  const size_t n = static_cast<size_t>(count(dims));
  if (is_signed) {
    std::vector<int8_t> v;
    for (int32_t x : random_ints(n, seed, -128, 127)) v.push_back(static_cast<int8_t>(x));
    return Tensor::from_vector(DType::kInt8, dims, v);
  }
  std::vector<uint8_t> v;
  for (int32_t x : random_ints(n, seed, 0, 255)) v.push_back(static_cast<uint8_t>(x));
  return Tensor::from_vector(DType::kUint8, dims, v);
}

// Integer outputs: equal dims and type, every element within 1 of the
// reference, at most `max_off_percent` % of them off by one (see the file
// comment).
void expect_within_one(const Tensor& want, const Tensor& got, const std::string& what, int max_off_percent = 1) {
  ASSERT_EQ(want.dims(), got.dims()) << what;
  ASSERT_EQ(want.dtype(), got.dtype()) << what;
  auto at = [](const Tensor& t, int64_t i) -> int32_t {
    return t.dtype() == DType::kInt8 ? t.data_as<int8_t>()[i] : t.data_as<uint8_t>()[i];
  };
  int64_t off_by_one = 0, reported = 0;
  for (int64_t i = 0; i < want.element_count(); ++i) {
    const int32_t e = at(want, i), a = at(got, i);
    if (e == a) continue;
    if (std::abs(e - a) == 1) {
      ++off_by_one;
      continue;
    }
    if (reported++ < 5) ADD_FAILURE() << what << ": element " << i << " is " << a << ", reference " << e;
  }
  EXPECT_LE(off_by_one * 100, want.element_count() * max_off_percent) << what << ": " << off_by_one << " elements off by one";
}

// Every output of `got` (cpu_onednn) against `want` (reference): float ones
// close, integer ones within one step with at most off_percent(i) % of the
// elements off by one.
template <class Outputs, class OffPercent>
void expect_outputs_match(const Outputs& want, const Outputs& got, const std::string& what, OffPercent off_percent) {
  ASSERT_TRUE(want.has_value()) << what << ": reference: " << want.status().message();
  ASSERT_TRUE(got.has_value()) << what << ": cpu_onednn: " << got.status().message();
  ASSERT_EQ(got->size(), want->size());
  for (size_t i = 0; i < got->size(); ++i) {
    const std::string out = what + " output " + std::to_string(i);
    if ((*want)[i].dtype() == DType::kFloat)
      expect_close((*want)[i], (*got)[i], {}, out);
    else
      expect_within_one((*want)[i], (*got)[i], out, off_percent(i));
  }
}

// Runs `model` on cpu_onednn alone (fallback denied: every node must be
// claimed, checked again here by name) and on the reference EP.
void expect_quantized_match(const std::string& model, const std::map<std::string, Tensor>& inputs,
                            const std::string& what, int max_off_percent = 1) {
  auto onednn = make_session(onednn_env(), model);
  auto reference = make_session(reference_env(), model);
  ASSERT_TRUE(onednn && reference) << what;
  for (const auto& n : onednn->placement().nodes) EXPECT_EQ(n.provider, "cpu_onednn") << what << ": " << n.op_type;
  expect_outputs_match(reference->run(inputs), onednn->run(inputs), what,
                       [max_off_percent](size_t) { return max_off_percent; });
}

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

// --- QLinearMatMul ---

std::string qlinear_matmul_model(const std::vector<int64_t>& a, int64_t cols, bool a_signed, bool y_signed,
                                 bool per_column, int32_t a_zero, int32_t y_zero) {
  testing::ModelBuilder m;
  m.input("a", a_signed ? kS8 : kU8, a);
  const int64_t k = a.back();
  scalar_float(m, "a_scale", 0.03f);
  m.int_initializer("a_zero", a_signed ? kS8 : kU8, {}, {a_zero});
  m.int_initializer("b", kS8, {k, cols}, random_ints(static_cast<size_t>(k * cols), 21, -127, 127));
  std::vector<float> b_scales = {0.005f};
  if (per_column) b_scales = random_values(static_cast<size_t>(cols), 22, 0.002f, 0.008f);
  const std::vector<int64_t> scale_dims = per_column ? std::vector<int64_t>{cols} : std::vector<int64_t>{};
  m.float_initializer("b_scale", scale_dims, b_scales);
  m.int_initializer("b_zero", kS8, scale_dims, std::vector<int32_t>(b_scales.size(), 0));
  scalar_float(m, "y_scale", 0.03f * 0.005f * 73.f * 73.f * std::sqrt(static_cast<float>(k)) / 40.f);
  m.int_initializer("y_zero", y_signed ? kS8 : kU8, {}, {y_zero});
  m.node("QLinearMatMul", {"a", "a_scale", "a_zero", "b", "b_scale", "b_zero", "y_scale", "y_zero"}, {"y"});
  m.output("y", y_signed ? kS8 : kU8, {});
  return m.bytes();
}

TEST(OnednnQLinearMatMul, MatchesReference) {
  struct Case {
    std::vector<int64_t> a;
    int64_t cols;
    bool a_signed, y_signed, per_column;
    int32_t a_zero, y_zero;
  };
  const std::vector<Case> cases = {
      {{4, 64}, 32, false, false, false, 0, 0},
      {{7, 96}, 48, false, false, true, 128, 120},      // per-column, zero points
      {{2, 5, 64}, 40, false, true, true, 100, -7},     // batched, s8 y
      {{3, 2, 6, 32}, 16, true, false, false, -4, 128},  // rank 4, s8 a
      {{64}, 24, true, true, true, 0, 3},               // 1-D a
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    expect_quantized_match(qlinear_matmul_model(c.a, c.cols, c.a_signed, c.y_signed, c.per_column, c.a_zero, c.y_zero),
                           {{"a", int8_tensor(c.a, c.a_signed, 200 + i)}}, "qlinearmatmul case " + std::to_string(i));
  }
}

// --- QuantizeLinear / DequantizeLinear ---

std::string quantize_model(bool is_signed, bool with_zero, int32_t zero, const std::vector<int64_t>& dims) {
  testing::ModelBuilder m;
  m.input("x", kFloat, dims);
  scalar_float(m, "scale", 0.05f);
  if (with_zero) m.int_initializer("zero", is_signed ? kS8 : kU8, {}, {zero});
  if (with_zero)
    m.node("QuantizeLinear", {"x", "scale", "zero"}, {"y"});
  else
    m.node("QuantizeLinear", {"x", "scale"}, {"y"});
  m.output("y", with_zero && is_signed ? kS8 : kU8, {});
  return m.bytes();
}

std::string dequantize_model(bool is_signed, bool with_zero, int32_t zero, const std::vector<int64_t>& dims) {
  testing::ModelBuilder m;
  m.input("x", is_signed ? kS8 : kU8, dims);
  scalar_float(m, "scale", 0.05f);
  if (with_zero) m.int_initializer("zero", is_signed ? kS8 : kU8, {}, {zero});
  if (with_zero)
    m.node("DequantizeLinear", {"x", "scale", "zero"}, {"y"});
  else
    m.node("DequantizeLinear", {"x", "scale"}, {"y"});
  m.output("y", kFloat, {});
  return m.bytes();
}

TEST(OnednnQuantizeLinear, QuantizeMatchesReference) {
  const std::vector<int64_t> dims = {2, 3, 5, 7};
  // Values span past both ends of the int8 ranges (saturation) and land on
  // exact .5 ties (multiples of 0.025 = scale / 2) to check half-to-even.
  Tensor x = random_tensor(dims, 31, -10.f, 10.f);
  float* p = x.mutable_data_as<float>();
  for (int64_t i = 0; i < 40; ++i) p[i] = 0.025f * static_cast<float>(i - 20);
  // The 40 tie values may each round the other way (x * (1 / scale) is not
  // x / scale): up to 20% of the 210 elements off by one, none by more.
  expect_quantized_match(quantize_model(false, true, 128, dims), {{"x", x}}, "u8 zero 128", 20);
  expect_quantized_match(quantize_model(false, true, 3, dims), {{"x", x}}, "u8 zero 3", 20);
  expect_quantized_match(quantize_model(true, true, -10, dims), {{"x", x}}, "s8 zero -10", 20);
  expect_quantized_match(quantize_model(true, true, 0, dims), {{"x", x}}, "s8 zero 0", 20);
  expect_quantized_match(quantize_model(false, false, 0, dims), {{"x", x}}, "u8 no zero point", 20);
  // Random values only: ties are then as rare as anywhere.
  expect_quantized_match(quantize_model(false, true, 128, dims), {{"x", random_tensor(dims, 32, -10.f, 10.f)}},
                         "u8 random");
}

TEST(OnednnDequantizeLinear, DequantizeMatchesReference) {
  const std::vector<int64_t> dims = {2, 3, 5, 7};
  expect_quantized_match(dequantize_model(false, true, 128, dims), {{"x", int8_tensor(dims, false, 41)}}, "u8");
  expect_quantized_match(dequantize_model(true, true, -5, dims), {{"x", int8_tensor(dims, true, 42)}}, "s8");
  expect_quantized_match(dequantize_model(false, false, 0, dims), {{"x", int8_tensor(dims, false, 43)}}, "no zero");
}

// Per-axis scales along `axis` with zero points `zeros` (one per channel).
std::string per_axis_model(const std::string& op, bool is_signed, int64_t axis, const std::vector<int64_t>& dims,
                           const std::vector<int32_t>& zeros) {
  testing::ModelBuilder m;
  const auto q_type = is_signed ? kS8 : kU8;
  m.input("x", op == "QuantizeLinear" ? kFloat : q_type, dims);
  const int64_t channels = dims[static_cast<size_t>(axis < 0 ? axis + static_cast<int64_t>(dims.size()) : axis)];
  m.float_initializer("scale", {channels}, random_values(static_cast<size_t>(channels), 51, 0.01f, 0.1f));
  m.int_initializer("zero", q_type, {channels}, zeros);
  testing::add_int_attr(m.node(op, {"x", "scale", "zero"}, {"y"}), "axis", axis);
  m.output("y", op == "QuantizeLinear" ? q_type : kFloat, {});
  return m.bytes();
}

TEST(OnednnQuantizeLinear, PerAxisWithACommonZeroPoint) {
  const std::vector<int64_t> dims = {2, 6, 5, 4};
  const Tensor x = random_tensor(dims, 52, -8.f, 8.f);
  expect_quantized_match(per_axis_model("QuantizeLinear", false, 1, dims, std::vector<int32_t>(6, 128)), {{"x", x}},
                         "Q per-axis u8");
  expect_quantized_match(per_axis_model("QuantizeLinear", true, -1, dims, std::vector<int32_t>(4, 0)), {{"x", x}},
                         "Q per-axis s8, axis -1");
  expect_quantized_match(per_axis_model("DequantizeLinear", false, 1, dims, std::vector<int32_t>(6, 100)),
                         {{"x", int8_tensor(dims, false, 53)}}, "DQ per-axis u8");
  expect_quantized_match(per_axis_model("DequantizeLinear", true, 0, dims, std::vector<int32_t>(2, 0)),
                         {{"x", int8_tensor(dims, true, 54)}}, "DQ per-axis s8, axis 0");
}

TEST(OnednnQuantizeLinear, PerAxisZeroPointsThatDifferStayOnTheReference) {
  const std::vector<int64_t> dims = {1, 3, 4, 4};
  const std::string model = per_axis_model("DequantizeLinear", false, 1, dims, {0, 128, 7});
  auto env = environment({"cpu_onednn", "reference"}, FallbackPolicy::kAllow);
  auto s = make_session(env, model);
  ASSERT_TRUE(s);
  ASSERT_EQ(s->placement().nodes.size(), 1u);
  EXPECT_EQ(s->placement().nodes[0].provider, "reference");
  EXPECT_NE(s->placement().nodes[0].reason.find("common zero point"), std::string::npos) << s->placement().nodes[0].reason;
}

// A QDQ block as the core's transformer leaves it: Q -> QLinearConv -> DQ
// -> Relu -> Q -> QLinearConv -> DQ -> (+ x) in one partition, int8
// values in oneDNN-chosen layouts between the primitives.
TEST(OnednnQLinear, QdqChainRunsInOnePartition) {
  testing::ModelBuilder m;
  m.input("x", kFloat, {1, 16, 12, 12});
  scalar_float(m, "s_act", 0.02f);
  m.int_initializer("z_act", kU8, {}, {128});
  for (const char* w : {"w1", "w2"}) {
    m.int_initializer(w, kS8, {16, 16, 3, 3}, random_ints(16 * 16 * 9, w[1], -127, 127));
    m.float_initializer(std::string(w) + "_s", {16}, random_values(16, w[1] + 5, 0.001f, 0.003f));
    m.int_initializer(std::string(w) + "_z", kS8, {16}, std::vector<int32_t>(16, 0));
  }
  m.int_initializer("b1", kS32, {16}, random_ints(16, 3, -2000, 2000));
  m.node("QuantizeLinear", {"x", "s_act", "z_act"}, {"xq"});
  add_ints_attr(m.node("QLinearConv", {"xq", "s_act", "z_act", "w1", "w1_s", "w1_z", "s_act", "z_act", "b1"}, {"c1"}),
                "pads", {1, 1, 1, 1});
  m.node("DequantizeLinear", {"c1", "s_act", "z_act"}, {"d1"});
  m.node("Relu", {"d1"}, {"r1"});
  m.node("QuantizeLinear", {"r1", "s_act", "z_act"}, {"q2"});
  add_ints_attr(m.node("QLinearConv", {"q2", "s_act", "z_act", "w2", "w2_s", "w2_z", "s_act", "z_act"}, {"c2"}),
                "pads", {1, 1, 1, 1});
  m.node("DequantizeLinear", {"c2", "s_act", "z_act"}, {"d2"});
  m.node("Add", {"d2", "x"}, {"y"});
  m.output("y", kFloat, {});
  // Float output: one requantization step differing (a tie) shows as a
  // difference of one activation step, 0.02.
  auto onednn = make_session(onednn_env(), m.bytes());
  auto reference = make_session(reference_env(), m.bytes());
  ASSERT_TRUE(onednn && reference);
  std::set<std::string> partitions;
  for (const auto& n : onednn->placement().nodes) {
    EXPECT_EQ(n.provider, "cpu_onednn") << n.op_type;
    partitions.insert(n.reason);
  }
  EXPECT_EQ(partitions.size(), 1u) << "expected one oneDNN partition";
  const std::map<std::string, Tensor> in = {{"x", random_tensor({1, 16, 12, 12}, 5, -2.f, 2.f)}};
  auto got = onednn->run(in);
  auto want = reference->run(in);
  ASSERT_TRUE(got.has_value() && want.has_value());
  expect_close((*want)[0], (*got)[0], {0, 0.0201}, "qdq chain");
}

// --- Quantized residuals: QLinearConv -> DQ -> Add(DQ(r)) -> [Relu] -> Q ---
//
// The convolution writes the block's output directly (post-ops: clip to
// y's range, sum of r, relu, out's zero point); the reference runs the same
// graph node by node. Tolerance: every element within 1 step of out, up to
// kResidualOffPercent % of them off by one. The fused convolution never
// rounds its own output y: the unfused graph adds DQ(y) = v + e, |e| <=
// y_scale / 2, where the fused one adds v, so the sum before out's rounding
// moves by at most 0.5 * y_scale / out_scale <= 0.5 steps of out (these
// cases keep out_scale >= y_scale, as calibrated sums do: the sum's range
// covers y's), and the rounded results differ by at most one. Measured:
// 1.4-17.2 % of elements off by one across these cases (a uniform e moves
// about y_scale / (4 * out_scale) of them: 17 % here), none by more. y's
// saturation is kept by the clip post-op: without it the "y saturates"
// cases are off by up to 157 steps.
constexpr int kResidualOffPercent = 25;

struct ResidualCase {
  enum Source { kBlockInput, kIntermediate, kOtherConv } r;  // where r comes from
  bool is_signed, relu;
  int32_t x_zero, y_zero, r_zero, out_zero;  // r_zero: r computed here (a block input r has x_zero)
  float y_scale_factor = 1.f;  // < 1: y saturates
  // Readers that must keep the block unfused (y or DQ(y) also a graph
  // output) or r's bytes intact (r also read by a later convolution or a
  // graph output).
  bool y_is_output = false, dq_y_is_output = false, r_read_later = false, r_is_output = false;
};

// x (float, 16x8x8) -> QuantizeLinear -> xq -> ... -> out = Q(relu?(DQ(y) +
// DQ(r))), y = QLinearConv(...). (The leading Q puts every node in one
// oneDNN partition, as in a QDQ model: nodes reading only graph inputs
// would each start a partition of their own.)
std::string residual_model(const ResidualCase& c) {
  testing::ModelBuilder m;
  const auto q = c.is_signed ? kS8 : kU8;
  const std::vector<int64_t> dims = {1, 16, 8, 8};
  m.input("x", kFloat, dims);
  const float x_scale = 0.02f;
  // As qlinear_conv_model: conv outputs spread about +-40 steps of conv_scale.
  const float conv_scale = x_scale * 0.004f * 73.f * 73.f * 12.f / 40.f;
  scalar_float(m, "x_s", x_scale);
  m.int_initializer("x_z", q, {}, {c.x_zero});
  scalar_float(m, "c_s", conv_scale);
  m.int_initializer("r_z", q, {}, {c.r_zero});
  scalar_float(m, "y_s", conv_scale * c.y_scale_factor);
  m.int_initializer("y_z", q, {}, {c.y_zero});
  m.node("QuantizeLinear", {"x", "x_s", "x_z"}, {"xq"});
  for (int k = 0; k < 4; ++k) {
    const std::string w = "w" + std::to_string(k);
    m.int_initializer(w, kS8, {16, 16, 3, 3}, random_ints(16 * 16 * 9, 60 + k, -127, 127));
    m.float_initializer(w + "_s", {16}, random_values(16, 70 + k, 0.002f, 0.006f));
    m.int_initializer(w + "_z", kS8, {16}, std::vector<int32_t>(16, 0));
    m.int_initializer("b" + std::to_string(k), kS32, {16}, random_ints(16, 80 + k, -2000, 2000));
  }
  auto conv = [&](const std::string& in, const std::string& in_s, const std::string& in_z, int k,
                  const std::string& out, const std::string& out_s, const std::string& out_z) {
    const std::string w = "w" + std::to_string(k);
    add_ints_attr(m.node("QLinearConv", {in, in_s, in_z, w, w + "_s", w + "_z", out_s, out_z, "b" + std::to_string(k)},
                         {out}),
                  "pads", {1, 1, 1, 1});
  };
  std::string r, r_s = "c_s", r_z = "r_z";
  switch (c.r) {
    case ResidualCase::kBlockInput:  // r = xq, also the convolution's own input
      r = "xq";
      r_s = "x_s";
      r_z = "x_z";
      conv("xq", "x_s", "x_z", 1, "y", "y_s", "y_z");
      break;
    case ResidualCase::kIntermediate:  // r computed here, read by y's convolution and the DQ
      r = "r";
      conv("xq", "x_s", "x_z", 0, "r", "c_s", "r_z");
      conv("r", "c_s", "r_z", 1, "y", "y_s", "y_z");
      break;
    case ResidualCase::kOtherConv:  // a downsample branch: r and y both convolutions of xq
      r = "r";
      conv("xq", "x_s", "x_z", 0, "r", "c_s", "r_z");
      conv("xq", "x_s", "x_z", 1, "y", "y_s", "y_z");
      break;
  }
  m.node("DequantizeLinear", {"y", "y_s", "y_z"}, {"dy"});
  m.node("DequantizeLinear", {r, r_s, r_z}, {"dr"});
  m.node("Add", {"dy", "dr"}, {"sum"});
  if (c.relu) m.node("Relu", {"sum"}, {"act"});
  // out_scale >= y_scale and r's scale (see kResidualOffPercent).
  scalar_float(m, "o_s", 1.5f * std::max(conv_scale, x_scale));
  m.int_initializer("o_z", q, {}, {c.out_zero});
  m.node("QuantizeLinear", {c.relu ? "act" : "sum", "o_s", "o_z"}, {"out"});
  m.output("out", q, dims);
  if (c.r_read_later) {
    conv(r, r_s, r_z, 2, "late", "y_s", "y_z");
    m.output("late", q, dims);
  }
  if (c.y_is_output) m.output("y", q, dims);
  if (c.dq_y_is_output) m.output("dy", kFloat, dims);
  if (c.r_is_output) m.output(r, q, dims);
  return m.bytes();
}

// Every node on cpu_onednn; `fused` residuals built into a convolution;
// outputs within one step of the reference's (fused outputs within
// kResidualOffPercent, others within the usual 1 %).
void expect_residual_match(const ResidualCase& c, uint64_t fused, const std::string& what) {
  const std::string model = residual_model(c);
  auto onednn = make_session(onednn_env(), model);
  auto reference = make_session(reference_env(), model);
  ASSERT_TRUE(onednn && reference) << what;
  std::set<std::string> partitions;
  for (const auto& n : onednn->placement().nodes) {
    EXPECT_EQ(n.provider, "cpu_onednn") << what << ": " << n.op_type;
    partitions.insert(n.reason);
  }
  EXPECT_EQ(partitions.size(), 1u) << what << ": expected one oneDNN partition";
  // x spans past the quantized range (xq saturates at both ends).
  const std::map<std::string, Tensor> in = {{"x", random_tensor({1, 16, 8, 8}, 400, -3.f, 3.f)}};
  const uint64_t before = onednn_counter("quantized_residuals");
  auto got = onednn->run(in);
  EXPECT_EQ(onednn_counter("quantized_residuals") - before, fused) << what << ": quantized residuals fused";
  expect_outputs_match(reference->run(in), std::move(got), what,
                       [fused](size_t i) { return i == 0 && fused > 0 ? kResidualOffPercent : 1; });
}

TEST(OnednnQuantizedResidual, FusedIntoTheConvolutionMatchesReference) {
  using R = ResidualCase;
  struct Named {
    R c;
    const char* what;
  };
  const std::vector<Named> cases = {
      // r, signed, relu, x_zero, y_zero, r_zero, out_zero
      {{R::kBlockInput, false, false, 128, 120, 128, 100}, "u8, r = block input (copied: the conv reads it)"},
      {{R::kBlockInput, false, true, 128, 120, 128, 100}, "u8, r = block input, relu"},
      {{R::kIntermediate, false, false, 128, 125, 110, 128}, "u8, r intermediate (in place)"},
      {{R::kIntermediate, false, true, 128, 125, 110, 3}, "u8, r intermediate, relu"},
      {{R::kOtherConv, false, false, 128, 128, 130, 128}, "u8, r from another QLinearConv"},
      {{R::kOtherConv, false, true, 128, 128, 0, 0}, "u8, r from another QLinearConv, relu, zero points 0"},
      {{R::kBlockInput, true, false, -3, 5, 0, -10}, "s8, r = block input"},
      {{R::kIntermediate, true, true, 0, -4, 7, -20}, "s8, r intermediate, relu"},
      {{R::kOtherConv, true, false, 2, 0, -6, 0}, "s8, r from another QLinearConv"},
      {{R::kOtherConv, true, true, 2, 0, -6, -128}, "s8, relu, out zero point at the minimum"},
      {{R::kIntermediate, false, false, 128, 128, 120, 128, 0.25f}, "u8, y saturates"},
      {{R::kOtherConv, true, true, 0, 10, 0, 0, 0.3f}, "s8, y saturates, relu"},
  };
  for (const Named& n : cases) expect_residual_match(n.c, 1, n.what);
}

// r's bytes are accumulated in place only when nothing else reads them
// afterwards: a later reader or a graph output keeps r intact (copied).
TEST(OnednnQuantizedResidual, KeepsTheResidualForOtherReaders) {
  using R = ResidualCase;
  R later{R::kIntermediate, false, true, 128, 125, 110, 100};
  later.r_read_later = true;
  expect_residual_match(later, 1, "r read by a later convolution");
  R output{R::kIntermediate, true, false, 0, -4, 7, -20};
  output.r_is_output = true;
  expect_residual_match(output, 1, "r also a graph output");
  R other{R::kOtherConv, false, false, 128, 128, 130, 128};
  other.r_read_later = true;
  expect_residual_match(other, 1, "r from another QLinearConv, read later");
}

// No fusion where y (or its dequantized value) is needed as it is: the
// chain is built node by node and matches the reference as closely as any
// unfused graph.
TEST(OnednnQuantizedResidual, NotFusedWhenTheIntermediateIsReadElsewhere) {
  using R = ResidualCase;
  R y_out{R::kIntermediate, false, true, 128, 125, 110, 100};
  y_out.y_is_output = true;
  expect_residual_match(y_out, 0, "y also a graph output");
  R dq_out{R::kBlockInput, true, false, -3, 5, 0, -10};
  dq_out.dq_y_is_output = true;
  expect_residual_match(dq_out, 0, "DQ(y) also a graph output");
}

// DQ -> MaxPool -> Q with the same parameters runs as one u8 / s8 MaxPool
// (exact: every element equal); with other parameters node by node.
TEST(OnednnQuantizedMaxPool, MatchesReference) {
  for (bool is_signed : {false, true})
    for (bool same : {true, false}) {
      testing::ModelBuilder m;
      const auto q = is_signed ? kS8 : kU8;
      m.input("x", q, {1, 8, 9, 9});
      scalar_float(m, "s", 0.05f);
      m.int_initializer("z", q, {}, {is_signed ? -7 : 130});
      scalar_float(m, "s_out", same ? 0.05f : 0.065f);
      m.int_initializer("z_out", q, {}, {same ? (is_signed ? -7 : 130) : 12});
      m.node("DequantizeLinear", {"x", "s", "z"}, {"d"});
      auto& pool = m.node("MaxPool", {"d"}, {"p"});
      add_ints_attr(pool, "kernel_shape", {3, 3});
      add_ints_attr(pool, "strides", {2, 2});
      add_ints_attr(pool, "pads", {1, 1, 1, 1});
      m.node("QuantizeLinear", {"p", "s_out", "z_out"}, {"y"});
      m.output("y", q, {1, 8, 5, 5});
      const std::string what = std::string(is_signed ? "s8" : "u8") + (same ? " same parameters" : " requantized");
      expect_quantized_match(m.bytes(), {{"x", int8_tensor({1, 8, 9, 9}, is_signed, 500)}}, what, same ? 0 : 1);
    }
}

// --- com.microsoft MatMulIntegerToFloat (a QDQ classifier's float logits) ---

struct IntToFloatCase {
  std::vector<int64_t> a;
  int64_t cols;
  bool a_signed, per_column, bias;
  std::optional<int32_t> a_zero;  // nullopt: no a_zero_point input
  int32_t b_zero = 0;
  bool constant_b = true;
};

std::string matmul_integer_to_float_model(const IntToFloatCase& c) {
  testing::ModelBuilder m;
  m.import_domain("com.microsoft", 1);
  m.input("a", c.a_signed ? kS8 : kU8, c.a);
  const int64_t k = c.a.back();
  if (c.constant_b) m.int_initializer("b", kS8, {k, c.cols}, random_ints(static_cast<size_t>(k * c.cols), 31, -127, 127));
  else m.input("b", kS8, {k, c.cols});
  scalar_float(m, "a_scale", 0.03f);
  std::vector<float> b_scales = {0.005f};
  if (c.per_column) b_scales = random_values(static_cast<size_t>(c.cols), 32, 0.002f, 0.008f);
  const std::vector<int64_t> scale_dims = c.per_column ? std::vector<int64_t>{c.cols} : std::vector<int64_t>{};
  m.float_initializer("b_scale", scale_dims, b_scales);
  std::vector<std::string> in = {"a", "b", "a_scale", "b_scale", "", "b_zero"};
  if (c.a_zero) {
    m.int_initializer("a_zero", c.a_signed ? kS8 : kU8, {}, {*c.a_zero});
    in[4] = "a_zero";
  }
  m.int_initializer("b_zero", kS8, scale_dims, std::vector<int32_t>(b_scales.size(), c.b_zero));
  if (c.bias) {
    m.float_initializer("bias", {c.cols}, random_values(static_cast<size_t>(c.cols), 33, -2.f, 2.f));
    in.push_back("bias");
  }
  m.node("MatMulIntegerToFloat", in, {"y"}, "", "com.microsoft");
  m.output("y", kFloat, {});
  return m.bytes();
}

TEST(OnednnMatMulIntegerToFloat, MatchesReference) {
  const std::vector<IntToFloatCase> cases = {
      {{1, 64}, 10, false, false, true, 128},          // a classifier: per tensor, bias
      {{4, 96}, 48, false, true, true, 120},           // per column
      {{2, 5, 64}, 40, false, true, false, 100},       // batched a, no bias
      {{3, 2, 6, 32}, 16, true, false, true, -4},      // rank 4, s8 a
      {{7, 32}, 24, true, true, true, std::nullopt},   // no a zero point
      {{64}, 24, false, true, true, 3},                // 1-D a
      {{2, 32}, 8, false, true, true, 128, 3},         // weight zero point: the shifted int8 matmul
      {{3, 40}, 12, true, false, false, -5, -7},       // ... per tensor, s8 a, no bias
  };
  for (size_t i = 0; i < cases.size(); ++i)
    expect_quantized_match(matmul_integer_to_float_model(cases[i]), {{"a", int8_tensor(cases[i].a, cases[i].a_signed, 300 + i)}},
                           "matmulintegertofloat case " + std::to_string(i));
}

TEST(OnednnMatMulIntegerToFloat, LeavesUnsupportedCasesToTheReference) {
  IntToFloatCase runtime_b{{2, 32}, 8, false, true, true, 128};
  runtime_b.constant_b = false;
  auto env = environment({"cpu_onednn", "reference"}, FallbackPolicy::kAllow);
  for (auto [c, reason] : {std::pair{runtime_b, "constant"}}) {
    const std::string model = matmul_integer_to_float_model(c);
    auto s = make_session(env, model);
    auto reference = make_session(reference_env(), model);
    ASSERT_TRUE(s && reference);
    ASSERT_EQ(s->placement().nodes.size(), 1u);
    EXPECT_EQ(s->placement().nodes[0].provider, "reference");
    EXPECT_NE(s->placement().nodes[0].reason.find(reason), std::string::npos) << s->placement().nodes[0].reason;
    std::map<std::string, Tensor> in = {{"a", int8_tensor(c.a, false, 1)}};
    if (!c.constant_b) in["b"] = int8_tensor({32, 8}, true, 2);
    auto got = s->run(in);
    auto want = reference->run(in);
    ASSERT_TRUE(got.has_value() && want.has_value());
    expect_close((*want)[0], (*got)[0], {}, reason);
  }
}

// The fusion end to end: a QDQ classifier head DQ(a) -> Gemm(DQ(W int8
// [N, K], per row), C) on cpu_onednn becomes MatMulIntegerToFloat with a
// transposed W (a constant the rewrite adds: the fusion gate must see it as
// one) and runs there, matching the unfused graph on the reference EP, with
// a nonzero weight zero point too (ops/matmul_integer_shifted.cpp).
void expect_qdq_gemm_head(int32_t w_zero, bool fused_expected) {
  constexpr int64_t k = 64, n = 10;
  const std::string what = "w_zero " + std::to_string(w_zero);
  testing::ModelBuilder m(13);
  m.input("x", kFloat, {2, k});
  scalar_float(m, "x_scale", 0.02f);
  m.int_initializer("x_zero", kU8, {}, {128});
  m.node("QuantizeLinear", {"x", "x_scale", "x_zero"}, {"xq"});
  m.node("DequantizeLinear", {"xq", "x_scale", "x_zero"}, {"xd"});
  m.int_initializer("w", kS8, {n, k}, random_ints(static_cast<size_t>(n * k), 41, -120, 120));
  m.float_initializer("w_scale", {n}, random_values(static_cast<size_t>(n), 42, 0.002f, 0.008f));
  m.int_initializer("w_zero", kS8, {n}, std::vector<int32_t>(n, w_zero));
  auto& dq = m.node("DequantizeLinear", {"w", "w_scale", "w_zero"}, {"wd"});
  testing::add_int_attr(dq, "axis", 0);
  m.float_initializer("c", {n}, random_values(static_cast<size_t>(n), 43, -1.f, 1.f));
  auto& gemm = m.node("Gemm", {"xd", "wd", "c"}, {"logits"});
  testing::add_int_attr(gemm, "transB", 1);
  m.output("logits", kFloat, {});
  const std::string model = m.bytes();
  Config fused_config;
  fused_config.providers = {"cpu_onednn"};
  fused_config.fallback = FallbackPolicy::kDeny;
  fused_config.optimization_level = OptimizationLevel::kExtended;
  Config plain_config;
  plain_config.providers = {"reference"};
  plain_config.optimization_level = OptimizationLevel::kDisabled;
  auto fused = make_session(testing::make_env(fused_config), model);
  auto plain = make_session(testing::make_env(plain_config), model);
  ASSERT_TRUE(fused && plain) << what;
  int fused_ops = 0, gemms = 0;
  for (const auto& node : fused->placement().nodes) {
    EXPECT_EQ(node.provider, "cpu_onednn") << what << ": " << node.op_type;
    fused_ops += node.op_type == "MatMulIntegerToFloat";
    gemms += node.op_type == "Gemm";
  }
  EXPECT_EQ(fused_ops, fused_expected ? 1 : 0) << what;
  EXPECT_EQ(gemms, fused_expected ? 0 : 1) << what;
  const std::map<std::string, Tensor> in = {{"x", random_tensor({2, k}, 44, -2.f, 2.f)}};
  auto want = plain->run(in);
  auto got = fused->run(in);
  ASSERT_TRUE(want.has_value() && got.has_value()) << what;
  expect_close((*want)[0], (*got)[0], {1e-4, 1e-4}, what);
}

TEST(OnednnMatMulIntegerToFloat, QdqGemmHeadIsFusedAndRunsOnOnednn) { expect_qdq_gemm_head(0, true); }

TEST(OnednnMatMulIntegerToFloat, QdqGemmHeadWithAWeightZeroPointIsFusedToo) { expect_qdq_gemm_head(5, true); }

}  // namespace
}  // namespace loom::ep_testing
