// matmul_integer_to_float_fusion: DQ(a) -> MatMul(., DQ(b)) and DQ(a) ->
// Gemm(., DQ(W), C) with a float result that is not quantized again (a QDQ
// classifier's logits) become com.microsoft MatMulIntegerToFloat. Only float
// rounding differs from the unfused graph (the reference EP at level
// disabled). Near misses keep their ops.
#include <gtest/gtest.h>

#include <cmath>

#include "common/model_builder.h"
#include "unit/transform/fusion_checks.h"

namespace loom {
namespace {

constexpr auto kFloat = ::onnx::TensorProto::FLOAT;
constexpr auto kU8 = ::onnx::TensorProto::UINT8;
constexpr auto kS8 = ::onnx::TensorProto::INT8;
using testing::float_tensor;
using testing::wave;

constexpr int64_t kK = 12, kN = 5;

struct LogitsCase {
  bool gemm = true;
  bool trans_b = true;       // Gemm: W is [N, K]
  bool per_channel = true;   // W's scales per output column (per row of a transB W)
  bool bias = true;          // Gemm's C, float [N]
  bool int8_activations = false;
  bool w_zero_point = true;  // the weights' DQ has a zero-point input
  std::vector<int64_t> a_dims = {3, kK};
  // Near misses.
  float alpha = 1.f;
  bool bias_2d = false;        // C of shape [1, N]
  bool quantized_after = false;  // the result is read by a QuantizeLinear
  bool dead_quantize = false;    // ... by a dead Q -> DQ (as quantizers leave on logits): fuses
  bool weights_input = false;  // the int8 weights are a graph input
};

std::string logits_model(const LogitsCase& c) {
  testing::ModelBuilder m(13);
  m.input("a", kFloat, c.a_dims);
  const auto act = c.int8_activations ? kS8 : kU8;
  m.float_initializer("a_scale", {}, {2.f / 255.f}).int_initializer("a_zero", act, {}, {c.int8_activations ? -3 : 128});
  m.node("QuantizeLinear", {"a", "a_scale", "a_zero"}, {"aq"});
  m.node("DequantizeLinear", {"aq", "a_scale", "a_zero"}, {"ad"});
  // W as stored: [N, K] for a transB Gemm, else [K, N]; scales along N.
  const std::vector<int64_t> w_dims = c.gemm && c.trans_b ? std::vector<int64_t>{kN, kK} : std::vector<int64_t>{kK, kN};
  const std::vector<float> w = wave(static_cast<size_t>(kK * kN), 0.6f, 0.4f);
  std::vector<float> scales;
  for (int64_t j = 0; j < (c.per_channel ? kN : 1); ++j) scales.push_back((0.3f + 0.1f * static_cast<float>(j)) / 127.f);
  std::vector<int32_t> wq;
  for (size_t i = 0; i < w.size(); ++i) {
    const size_t col = c.gemm && c.trans_b ? i / kK : i % kN;
    wq.push_back(std::max(-127, std::min(127, static_cast<int32_t>(std::nearbyint(w[i] / scales[c.per_channel ? col : 0])))));
  }
  const std::vector<int64_t> scale_dims = c.per_channel ? std::vector<int64_t>{kN} : std::vector<int64_t>{};
  if (c.weights_input) m.input("wq", kS8, w_dims);
  else m.int_initializer("wq", kS8, w_dims, wq);
  m.float_initializer("w_scale", scale_dims, scales);
  std::vector<std::string> dq_in = {"wq", "w_scale"};
  if (c.w_zero_point) {
    m.int_initializer("w_zero", kS8, scale_dims, std::vector<int32_t>(scales.size(), 0));
    dq_in.push_back("w_zero");
  }
  auto& wdq = m.node("DequantizeLinear", std::vector<std::string>(dq_in), std::vector<std::string>{"wd"});
  if (c.per_channel) testing::add_int_attr(wdq, "axis", c.gemm && c.trans_b ? 0 : 1);
  std::vector<std::string> op_in = {"ad", "wd"};
  if (c.gemm && c.bias) {
    m.float_initializer("bias", c.bias_2d ? std::vector<int64_t>{1, kN} : std::vector<int64_t>{kN}, wave(kN, 0.5f, 1.f));
    op_in.push_back("bias");
  }
  auto& op = m.node(c.gemm ? "Gemm" : "MatMul", std::vector<std::string>(op_in), std::vector<std::string>{"logits"});
  if (c.gemm && c.trans_b) testing::add_int_attr(op, "transB", 1);
  if (c.alpha != 1.f) testing::add_float_attr(op, "alpha", c.alpha);
  m.output("logits", kFloat, {});
  if (c.quantized_after) {
    m.float_initializer("y_scale", {}, {0.05f}).int_initializer("y_zero", kU8, {}, {128});
    m.node("QuantizeLinear", {"logits", "y_scale", "y_zero"}, {"y"});
    m.output("y", kU8, {});
  }
  if (c.dead_quantize) {
    m.float_initializer("y_scale", {}, {0.05f}).int_initializer("y_zero", kU8, {}, {128});
    m.node("QuantizeLinear", {"logits", "y_scale", "y_zero"}, {"unused_q"});
    m.node("DequantizeLinear", {"unused_q", "y_scale", "y_zero"}, {"unused"});
  }
  return m.bytes();
}

std::map<std::string, Tensor> logits_feeds(const LogitsCase& c) {
  int64_t count = 1;
  for (int64_t d : c.a_dims) count *= d;
  std::map<std::string, Tensor> in = {{"a", float_tensor(Dims(c.a_dims), wave(static_cast<size_t>(count), 0.9f))}};
  if (c.weights_input) {
    std::vector<int8_t> w(static_cast<size_t>(kK * kN));
    for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int8_t>(static_cast<int>(i * 37 % 255) - 127);
    in["wq"] = Tensor::from_vector(DType::kInt8, c.gemm && c.trans_b ? Dims{kN, kK} : Dims{kK, kN}, w);
  }
  return in;
}

TEST(MatMulIntegerToFloatFusion, PassIsListed) {
  testing::expect_listed_pass("matmul_integer_to_float_fusion", OptimizationLevel::kExtended);
}

TEST(MatMulIntegerToFloatFusion, GemmAndMatMulBecomeMatMulIntegerToFloat) {
  struct Named {
    LogitsCase c;
    std::string what;
  };
  std::vector<Named> cases;
  for (bool trans_b : {true, false})
    for (bool per_channel : {true, false})
      for (bool bias : {true, false}) {
        LogitsCase c;
        c.trans_b = trans_b;
        c.per_channel = per_channel;
        c.bias = bias;
        cases.push_back({c, std::string("Gemm") + (trans_b ? " transB" : "") + (per_channel ? ", per channel" : ", per tensor") +
                                (bias ? ", bias" : "")});
      }
  LogitsCase s8;
  s8.int8_activations = true;
  cases.push_back({s8, "Gemm, int8 activations"});
  LogitsCase no_zero;
  no_zero.w_zero_point = false;
  cases.push_back({no_zero, "Gemm, weights' DQ without a zero point"});
  LogitsCase dead_q;
  dead_q.dead_quantize = true;
  cases.push_back({dead_q, "Gemm, a dead Q -> DQ of the logits"});
  LogitsCase mm;
  mm.gemm = false;
  cases.push_back({mm, "MatMul, per column"});
  LogitsCase mm3 = mm;
  mm3.per_channel = false;
  mm3.a_dims = {2, 3, kK};
  cases.push_back({mm3, "MatMul, per tensor, rank-3 a"});
  for (const Named& n : cases)
    testing::expect_fuses(logits_model(n.c), logits_feeds(n.c),
                          {{"QuantizeLinear", 1}, {"com.microsoft.MatMulIntegerToFloat", 1}}, n.what,
                          OptimizationLevel::kExtended, 1e-5);
}

TEST(MatMulIntegerToFloatFusion, NearMissesKeepTheirOps) {
  LogitsCase alpha;
  alpha.alpha = 0.5f;
  LogitsCase bias_2d;
  bias_2d.bias_2d = true;
  LogitsCase quantized;
  quantized.quantized_after = true;
  LogitsCase weights_input;
  weights_input.weights_input = true;
  for (auto [c, what] : {std::pair{alpha, "alpha 0.5"}, std::pair{bias_2d, "C of shape [1, N]"},
                         std::pair{quantized, "the result is quantized again"},
                         std::pair{weights_input, "weights are a graph input"}}) {
    auto fused = testing::session(logits_model(c), OptimizationLevel::kExtended);
    ASSERT_TRUE(fused) << what;
    EXPECT_EQ(testing::op_counts(*fused)["com.microsoft.MatMulIntegerToFloat"], 0) << what;
    EXPECT_EQ(testing::op_counts(*fused)["Gemm"], 1) << what;
    auto plain = testing::session(logits_model(c), OptimizationLevel::kDisabled);
    testing::expect_same_outputs(*plain, *fused, logits_feeds(c), what, 1e-5);
  }
}

}  // namespace
}  // namespace loom
