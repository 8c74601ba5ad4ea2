// com.microsoft MatMulIntegerToFloat on cpu_onednn (a QDQ classifier's
// float logits) vs the reference EP, and the QDQ Gemm heads the core fuses
// into it.
#include <cstdint>
#include <optional>
#include <set>

#include "quantized_compare.h"

namespace loom::ep_testing {
namespace {

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
