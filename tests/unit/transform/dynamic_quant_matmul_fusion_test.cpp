// dynamic_quant_matmul_fusion: quantize_dynamic's DynamicQuantizeLinear ->
// MatMulInteger -> Cast -> Mul(., Mul(x_scale, W_scale)) [-> Add(bias)]
// becomes com.microsoft MatMulIntegerToFloat on the reference EP, with the
// outputs of the unfused graph (level disabled). Near misses keep their ops.
#include <gtest/gtest.h>

#include "common/dynamic_quant_model.h"
#include "unit/transform/fusion_checks.h"

namespace loom {
namespace {

constexpr auto kFloat = ::onnx::TensorProto::FLOAT;
constexpr int64_t kK = 24, kN = 10;
const std::vector<int64_t> kXDims = {2, 3, kK};

// x [2, 3, K] -> one layer -> y.
std::string one_layer(testing::DynamicLinear l) {
  testing::ModelBuilder m(13);
  m.input("x", kFloat, kXDims);
  testing::dynamic_quantize(m, "x");
  l.x = "x";
  l.output = "y";
  l.k = kK;
  l.n = kN;
  testing::dynamic_linear(m, l);
  m.output("y", kFloat, {});
  return m.bytes();
}

std::map<std::string, Tensor> feeds(bool weights_input = false) {
  std::map<std::string, Tensor> in = {
      {"x", testing::float_tensor(Dims(kXDims), testing::dq_values(static_cast<size_t>(2 * 3 * kK), 7))}};
  if (weights_input) {
    std::vector<int8_t> w(static_cast<size_t>(kK * kN));
    for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int8_t>(static_cast<int>(i * 37 % 255) - 127);
    in["y_W_q"] = Tensor::from_vector(DType::kInt8, Dims{kK, kN}, w);
  }
  return in;
}

TEST(DynamicQuantMatMulFusion, PassIsListed) {
  testing::expect_listed_pass("dynamic_quant_matmul_fusion", OptimizationLevel::kExtended);
}

TEST(DynamicQuantMatMulFusion, QuantizeDynamicLayersBecomeMatMulIntegerToFloat) {
  std::vector<std::pair<testing::DynamicLinear, std::string>> cases;
  for (bool is_signed : {true, false})
    for (bool per_channel : {false, true})
      for (bool bias : {true, false}) {
        testing::DynamicLinear l;
        l.signed_weights = is_signed;
        l.per_channel = per_channel;
        l.bias = bias;
        cases.push_back({l, std::string(is_signed ? "int8" : "uint8") + (per_channel ? " per column" : " per tensor") +
                                (bias ? ", bias" : "")});
      }
  testing::DynamicLinear swapped;
  swapped.swap_mul_operands = true;
  swapped.bias_first = true;
  cases.push_back({swapped, "Muls and Add with swapped operands"});
  testing::DynamicLinear no_w_zero;
  no_w_zero.w_zero_point = false;
  cases.push_back({no_w_zero, "MatMulInteger without W's zero point"});
  for (const auto& [l, what] : cases) {
    std::map<std::string, int> want = {{"DynamicQuantizeLinear", 1}, {"com.microsoft.MatMulIntegerToFloat", 1}};
    testing::expect_fuses(one_layer(l), feeds(), want, what, OptimizationLevel::kExtended, 1e-6);
  }
}

// Three projections of one activation share its DynamicQuantizeLinear (as
// quantize_dynamic writes a BERT layer's Q, K and V): each fuses, the
// DynamicQuantizeLinear stays once.
TEST(DynamicQuantMatMulFusion, SharedDynamicQuantizeLinear) {
  testing::ModelBuilder m(13);
  m.input("x", kFloat, kXDims);
  testing::dynamic_quantize(m, "x");
  for (int i = 0; i < 3; ++i) {
    testing::DynamicLinear l;
    l.x = "x";
    l.output = "y" + std::to_string(i);
    l.k = kK;
    l.n = kN;
    l.seed = static_cast<uint32_t>(10 + i);
    l.per_channel = i == 1;
    testing::dynamic_linear(m, l);
    m.output(l.output, kFloat, {});
  }
  testing::expect_fuses(m.bytes(), feeds(), {{"DynamicQuantizeLinear", 1}, {"com.microsoft.MatMulIntegerToFloat", 3}},
                        "Q, K, V", OptimizationLevel::kExtended, 1e-6);
}

// The scale product is not part of what the fused op replaces: when it is
// read elsewhere (here a graph output) the chain still fuses and the Mul
// stays for that reader. A bias of shape [1, N] is not MatMulIntegerToFloat's
// (its bias is [N]): the Add stays after the fused op.
TEST(DynamicQuantMatMulFusion, SharedScaleProductAndTwoDimensionalBias) {
  testing::ModelBuilder m(13);
  m.input("x", kFloat, kXDims);
  testing::dynamic_quantize(m, "x");
  testing::DynamicLinear l;
  l.x = "x";
  l.output = "y";
  l.k = kK;
  l.n = kN;
  l.bias = false;
  testing::dynamic_linear(m, l);
  m.float_initializer("bias_2d", {1, kN}, testing::dq_values(static_cast<size_t>(kN), 3));
  m.node("Add", {"y", "bias_2d"}, {"z"});
  m.output("z", kFloat, {});
  m.output("y_scales", kFloat, {});
  testing::expect_fuses(m.bytes(), feeds(),
                        {{"DynamicQuantizeLinear", 1}, {"com.microsoft.MatMulIntegerToFloat", 1}, {"Mul", 1}, {"Add", 1}},
                        "scale product also an output, [1, N] bias", OptimizationLevel::kExtended, 1e-6);
}

TEST(DynamicQuantMatMulFusion, NearMissesKeepTheirOps) {
  testing::DynamicLinear half;
  half.cast_to = ::onnx::TensorProto::FLOAT16;
  testing::DynamicLinear weights_input;
  weights_input.weights_input = true;
  testing::DynamicLinear wrong_scale;
  wrong_scale.wrong_scale = true;
  testing::DynamicLinear acc_read;
  acc_read.acc_read_elsewhere = true;
  for (const auto& [l, what] : {std::pair{half, "Cast to float16"}, std::pair{weights_input, "weights are a graph input"},
                                std::pair{wrong_scale, "scale Mul(x_scale, x_scale)"},
                                std::pair{acc_read, "the accumulator is a graph output"}}) {
    testing::expect_no_fusion(one_layer(l), feeds(l.weights_input), "MatMulInteger", what);
    auto fused = testing::session(one_layer(l), OptimizationLevel::kExtended);
    ASSERT_TRUE(fused) << what;
    EXPECT_EQ(testing::op_counts(*fused)["com.microsoft.MatMulIntegerToFloat"], 0) << what;
  }
}

}  // namespace
}  // namespace loom
