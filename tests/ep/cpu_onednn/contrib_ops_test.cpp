// ONNX Runtime's com.microsoft contrib ops on cpu_onednn vs the reference EP
// (which matches ORT 1.30): Gelu / FastGelu / BiasGelu (standalone and as
// post-ops of a MatMul), SkipLayerNormalization, LayerNormalization before
// opset 17 (ORT's contrib in the default domain) and Attention (no / 1-D /
// 2-D masks, several head counts, S = 1 and 7). Variants cpu_onednn does not
// compile stay with the reference EP, with a reason.
#include "ep_compare.h"

namespace loom::ep_testing {
namespace {

constexpr char kMs[] = "com.microsoft";

testing::ModelBuilder ms_model(int64_t opset = 14) {
  testing::ModelBuilder m(opset);
  m.import_domain(kMs, 1);
  return m;
}

Tensor int32_tensor(const std::vector<int64_t>& dims, const std::vector<int32_t>& values) {
  return Tensor::from_vector(DType::kInt32, dims, values);
}

// --- Gelu family ---

std::string gelu_model(const std::string& op, const std::vector<int64_t>& dims, bool bias, bool matmul) {
  auto m = ms_model();
  m.input("x", kFloat, dims);
  std::string x = "x";
  const int64_t h = dims.back();
  if (matmul) {
    random_weights(m, "w", {h, h}, 5, h);
    m.node("MatMul", {"x", "w"}, {"mm"});
    x = "mm";
  }
  if (bias) {
    random_weights(m, "b", {h}, 6);
    m.node(op, {x, "b"}, {"y"}, "", kMs);
  } else {
    m.node(op, {x}, {"y"}, "", kMs);
  }
  m.output("y", kFloat, {});
  return m.bytes();
}

TEST(OnednnContrib, GeluFamilyMatchesReference) {
  for (const std::vector<int64_t>& dims : std::vector<std::vector<int64_t>>{{2, 7, 32}, {4, 48}, {1, 1, 16}})
    for (bool matmul : {false, true}) {
      const std::map<std::string, Tensor> in = {{"x", random_tensor(dims, 3, -3.f, 3.f)}};
      const std::string where = std::string(matmul ? " after MatMul" : "") + " rank " + std::to_string(dims.size());
      expect_matches_reference(gelu_model("Gelu", dims, false, matmul), in, {}, "Gelu" + where);
      expect_matches_reference(gelu_model("FastGelu", dims, false, matmul), in, {}, "FastGelu" + where);
      expect_matches_reference(gelu_model("FastGelu", dims, true, matmul), in, {}, "FastGelu(bias)" + where);
      expect_matches_reference(gelu_model("BiasGelu", dims, true, matmul), in, {}, "BiasGelu" + where);
      expect_matches_reference(gelu_model("QuickGelu", dims, false, matmul), in, {}, "QuickGelu" + where);
    }
}

// MatMul -> BiasGelu with a constant bias: one partition, one node each.
TEST(OnednnContrib, MatMulBiasGeluIsClaimedWhole) {
  const std::string model = gelu_model("BiasGelu", {2, 7, 32}, true, true);
  auto s = make_session(onednn_env(), model);
  ASSERT_TRUE(s);
  ASSERT_EQ(s->placement().nodes.size(), 2u);
  for (const auto& n : s->placement().nodes) EXPECT_EQ(n.provider, "cpu_onednn") << n.node_name;
  EXPECT_EQ(s->placement().providers.size(), 1u);
}

// --- SkipLayerNormalization ---

struct SkipCase {
  std::vector<int64_t> skip;
  bool beta, bias, sum_output;
  float epsilon;  // 0: default
};

std::string skip_ln_model(const std::vector<int64_t>& dims, const SkipCase& c, bool matmul_before) {
  auto m = ms_model();
  const int64_t h = dims.back();
  m.input("x", kFloat, dims);
  m.input("skip", kFloat, c.skip);
  std::string x = "x";
  if (matmul_before) {
    random_weights(m, "w", {h, h}, 8, h);
    random_weights(m, "wb", {h}, 9);
    m.node("MatMul", {"x", "w"}, {"mm"});
    m.node("Add", {"mm", "wb"}, {"mmb"});
    x = "mmb";
  }
  random_weights(m, "gamma", {h}, 10);
  random_weights(m, "beta", {h}, 11);
  random_weights(m, "bias", {h}, 12);
  auto& n = m.node("SkipLayerNormalization", {x, "skip", "gamma", c.beta ? "beta" : "", c.bias ? "bias" : ""},
                   c.sum_output ? std::initializer_list<std::string>{"y", "", "", "sum"}
                                : std::initializer_list<std::string>{"y"},
                   "", kMs);
  if (c.epsilon != 0.f) add_float_attr(n, "epsilon", c.epsilon);
  m.output("y", kFloat, {});
  if (c.sum_output) m.output("sum", kFloat, {});
  return m.bytes();
}

TEST(OnednnContrib, SkipLayerNormalizationMatchesReference) {
  const std::vector<int64_t> dims = {2, 7, 32};
  const std::vector<SkipCase> cases = {
      {{2, 7, 32}, true, true, false, 0.f}, {{2, 7, 32}, false, false, false, 1e-5f},
      {{7, 32}, true, false, true, 0.f},    {{1, 7, 32}, true, true, true, 1e-3f},
      {{2, 7, 32}, false, true, true, 0.f},
  };
  for (size_t i = 0; i < cases.size(); ++i)
    for (bool matmul : {false, true}) {
      const std::map<std::string, Tensor> in = {{"x", random_tensor(dims, 20 + i, -2.f, 2.f)},
                                                {"skip", random_tensor(cases[i].skip, 40 + i, -2.f, 2.f)}};
      expect_matches_reference(skip_ln_model(dims, cases[i], matmul), in, {1e-4, 1e-4},
                               "SkipLayerNorm case " + std::to_string(i) + (matmul ? " after MatMul+Add" : ""));
    }
  // 2-D input, hidden 768 (BERT-base).
  const std::map<std::string, Tensor> in = {{"x", random_tensor({5, 768}, 7)}, {"skip", random_tensor({5, 768}, 8)}};
  expect_matches_reference(skip_ln_model({5, 768}, {{5, 768}, true, true, true, 0.f}, false), in, {1e-4, 1e-4},
                           "SkipLayerNorm hidden 768");
}

TEST(OnednnContrib, SkipLayerNormalizationSplitIntoMatMulPostOps) {
  // As Loom's fusion emits it for BERT: the MatMul result may be either
  // operand, the bias belongs to it, dims are symbolic at claim time. The EP
  // splits the node into Add(mm, bias), Add(., residual), LayerNorm so both
  // adds become the MatMul's post-ops; output 3 (the sum) must still appear.
  for (bool matmul_as_skip : {false, true})
    for (bool sum_output : {false, true}) {
      auto m = ms_model();
      m.input("x", kFloat, {-1, -1, 32});
      m.input("residual", kFloat, {-1, -1, 32});
      random_weights(m, "w", {32, 32}, 8, 32);
      random_weights(m, "gamma", {32}, 10);
      random_weights(m, "beta", {32}, 11);
      random_weights(m, "bias", {32}, 12);
      m.node("MatMul", {"x", "w"}, {"mm"});
      const std::string a = matmul_as_skip ? "residual" : "mm", b = matmul_as_skip ? "mm" : "residual";
      m.node("SkipLayerNormalization", {a, b, "gamma", "beta", "bias"},
             sum_output ? std::initializer_list<std::string>{"y", "", "", "sum"} : std::initializer_list<std::string>{"y"},
             "", kMs);
      m.output("y", kFloat, {});
      if (sum_output) m.output("sum", kFloat, {});
      const std::map<std::string, Tensor> in = {{"x", random_tensor({2, 5, 32}, 3)},
                                                {"residual", random_tensor({2, 5, 32}, 4)}};
      expect_matches_reference(m.bytes(), in, {1e-4, 1e-4},
                               std::string("MatMul as ") + (matmul_as_skip ? "skip" : "input") +
                                   (sum_output ? ", sum output" : ""));
    }
}

// LayerNormalization in the default domain before opset 17 is ORT's contrib
// op (same semantics): claimed like opset 17's.
TEST(OnednnContrib, LayerNormalizationBeforeOpset17MatchesReference) {
  for (int64_t opset : {13, 16}) {
    testing::ModelBuilder m(opset);
    m.input("x", kFloat, {2, 7, 32});
    random_weights(m, "gamma", {32}, 1);
    random_weights(m, "beta", {32}, 2);
    add_float_attr(m.node("LayerNormalization", {"x", "gamma", "beta"}, {"y"}), "epsilon", 1e-5f);
    m.output("y", kFloat, {});
    expect_matches_reference(m.bytes(), {{"x", random_tensor({2, 7, 32}, 3)}}, {1e-4, 1e-4},
                             "LayerNormalization opset " + std::to_string(opset));
  }
}

// --- Attention ---

enum class Mask { kNone, kRaw2D, kEnd1D, kDummy };

struct AttentionCase {
  int64_t batch, seq, hidden, heads;
  Mask mask;
  bool bias = true;
  bool constant_weights = true;
  float scale = 0.f;
  std::vector<int64_t> qkv_sizes = {};
};

std::string attention_model(const AttentionCase& c) {
  auto m = ms_model();
  m.input("x", kFloat, {c.batch, c.seq, c.hidden});
  const int64_t width = c.qkv_sizes.empty() ? 3 * c.hidden : c.qkv_sizes[0] + c.qkv_sizes[1] + c.qkv_sizes[2];
  if (c.constant_weights) random_weights(m, "w", {c.hidden, width}, 31, c.hidden);
  else m.input("w", kFloat, {c.hidden, width});
  random_weights(m, "b", {width}, 32);
  std::string mask;
  switch (c.mask) {
    case Mask::kRaw2D: m.input(mask = "mask", ::onnx::TensorProto::INT32, {c.batch, c.seq}); break;
    case Mask::kEnd1D: m.input(mask = "mask", ::onnx::TensorProto::INT32, {c.batch}); break;
    case Mask::kDummy: m.input(mask = "mask", ::onnx::TensorProto::INT32, {c.batch, 1}); break;
    case Mask::kNone: break;
  }
  auto& n = m.node("Attention", {"x", "w", c.bias ? "b" : "", mask}, {"y"}, "attn", kMs);
  testing::add_int_attr(n, "num_heads", c.heads);
  if (c.scale != 0.f) add_float_attr(n, "scale", c.scale);
  if (!c.qkv_sizes.empty()) add_ints_attr(n, "qkv_hidden_sizes", c.qkv_sizes);
  m.output("y", kFloat, {});
  return m.bytes();
}

std::map<std::string, Tensor> attention_inputs(const AttentionCase& c, uint32_t seed) {
  std::map<std::string, Tensor> in = {{"x", random_tensor({c.batch, c.seq, c.hidden}, seed, -2.f, 2.f)}};
  const int64_t width = c.qkv_sizes.empty() ? 3 * c.hidden : c.qkv_sizes[0] + c.qkv_sizes[1] + c.qkv_sizes[2];
  if (!c.constant_weights) in["w"] = random_tensor({c.hidden, width}, seed + 1, -0.2f, 0.2f);
  std::vector<int32_t> mask;
  if (c.mask == Mask::kRaw2D) {
    // Mixed 0 / 1 (and a 2, which counts as kept), never all masked.
    for (int64_t b = 0; b < c.batch; ++b)
      for (int64_t s = 0; s < c.seq; ++s) mask.push_back(s == 0 ? 2 : static_cast<int32_t>((b + s * 3 + seed) % 2));
    in["mask"] = int32_tensor({c.batch, c.seq}, mask);
  } else if (c.mask == Mask::kEnd1D) {
    for (int64_t b = 0; b < c.batch; ++b) mask.push_back(static_cast<int32_t>(b == 0 ? c.seq : (c.seq + 1) / 2 + b - 1));
    in["mask"] = int32_tensor({c.batch}, mask);
  } else if (c.mask == Mask::kDummy) {
    in["mask"] = int32_tensor({c.batch, 1}, std::vector<int32_t>(static_cast<size_t>(c.batch), 1));
  }
  return in;
}

std::string describe(const AttentionCase& c) {
  const char* masks[] = {"no mask", "2-D mask", "1-D mask", "dummy mask"};
  return "Attention B=" + std::to_string(c.batch) + " S=" + std::to_string(c.seq) + " hidden=" + std::to_string(c.hidden) +
         " heads=" + std::to_string(c.heads) + " " + masks[static_cast<int>(c.mask)] + (c.bias ? "" : " no bias") +
         (c.constant_weights ? "" : " weights input") + (c.scale != 0.f ? " scale" : "") +
         (c.qkv_sizes.empty() ? "" : " qkv_hidden_sizes");
}

TEST(OnednnContrib, AttentionMatchesReference) {
  std::vector<AttentionCase> cases;
  for (int64_t seq : {1, 7})
    for (int64_t heads : {1, 2, 4})
      for (Mask mask : {Mask::kNone, Mask::kRaw2D, Mask::kEnd1D}) cases.push_back({2, seq, 32, heads, mask});
  cases.push_back({2, 7, 32, 4, Mask::kDummy});
  cases.push_back({2, 7, 32, 2, Mask::kRaw2D, false});
  cases.push_back({2, 7, 32, 2, Mask::kEnd1D, true, false});
  cases.push_back({2, 7, 32, 4, Mask::kRaw2D, true, true, 0.3f});
  cases.push_back({2, 7, 32, 4, Mask::kEnd1D, true, true, 0.f, {32, 32, 16}});
  cases.push_back({1, 16, 64, 12 / 3, Mask::kRaw2D});
  for (size_t i = 0; i < cases.size(); ++i)
    expect_matches_reference(attention_model(cases[i]), attention_inputs(cases[i], static_cast<uint32_t>(i)),
                             {1e-4, 2e-5}, describe(cases[i]));
}

// --- left to the reference EP, with a reason ---

void expect_left_to_reference(const std::string& model, const std::string& reason_part, const std::string& what) {
  auto env = environment({"cpu_onednn", "reference"}, FallbackPolicy::kAllow);
  auto s = make_session(env, model);
  ASSERT_TRUE(s) << what;
  bool found = false;
  for (const auto& n : s->placement().nodes) {
    if (n.op_type != "Attention") continue;
    found = true;
    EXPECT_EQ(n.provider, "reference") << what;
    EXPECT_NE(n.reason.find(reason_part), std::string::npos) << what << ": " << n.reason;
  }
  EXPECT_TRUE(found) << what;
}

TEST(OnednnContrib, UnsupportedAttentionStaysWithReference) {
  {
    auto m = ms_model();
    m.input("x", kFloat, {2, 3, 8});
    m.input("past", kFloat, {2, 2, 2, 4, 4});
    random_weights(m, "w", {8, 24}, 1, 8);
    auto& n = m.node("Attention", {"x", "w", "", "", "past"}, {"y", "present"}, "attn", kMs);
    testing::add_int_attr(n, "num_heads", 2);
    m.output("y", kFloat, {});
    m.output("present", kFloat, {});
    expect_left_to_reference(m.bytes(), "past", "Attention with past");
  }
  {
    auto m = ms_model();
    m.input("x", kFloat, {2, 3, 8});
    m.input("mask", ::onnx::TensorProto::INT32, {2, 3, 3});
    random_weights(m, "w", {8, 24}, 1, 8);
    auto& n = m.node("Attention", {"x", "w", "", "mask"}, {"y"}, "attn", kMs);
    testing::add_int_attr(n, "num_heads", 2);
    m.output("y", kFloat, {});
    expect_left_to_reference(m.bytes(), "rank 3", "Attention with a 3-D mask");
  }
  {
    auto m = ms_model();
    m.input("x", kFloat, {2, 3, 8});
    random_weights(m, "w", {8, 24}, 1, 8);
    auto& n = m.node("Attention", {"x", "w"}, {"y"}, "attn", kMs);
    testing::add_int_attr(n, "num_heads", 2);
    testing::add_int_attr(n, "unidirectional", 1);
    m.output("y", kFloat, {});
    expect_left_to_reference(m.bytes(), "unidirectional", "causal Attention");
  }
}

}  // namespace
}  // namespace loom::ep_testing
