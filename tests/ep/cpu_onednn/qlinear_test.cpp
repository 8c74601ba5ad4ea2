// Quantized ops on cpu_onednn vs the reference EP: QLinearMatMul (2-D,
// batched, per-column scales), QuantizeLinear / DequantizeLinear (per tensor
// and per axis), and a Q/DQ chain in one partition.
#include <cstdint>
#include <optional>
#include <set>

#include "quantized_compare.h"

namespace loom::ep_testing {
namespace {

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

}  // namespace
}  // namespace loom::ep_testing
