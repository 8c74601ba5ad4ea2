// com.microsoft FusedConv, FusedGemm and FusedMatMul on cpu_onednn (the
// activation / alpha as a post-op of the Conv / Gemm / MatMul primitive) vs
// the reference EP: every activation the EP builds, grouped convolutions,
// transposes, alpha on constant and computed operands, a chain after the
// fused node; and what it leaves to the reference EP (FusedConv's Z).
#include "ep_compare.h"

namespace loom::ep_testing {
namespace {

constexpr const char* kMs = "com.microsoft";
using testing::add_floats_attr;

// ONNX's shape inference has no com.microsoft schemas: the fused node's
// output is declared float, as the passes keep the type of the value they fuse into.
void declare_float(testing::ModelBuilder& m, const std::string& value) {
  auto* vi = m.proto().mutable_graph()->add_value_info();
  vi->set_name(value);
  vi->mutable_type()->mutable_tensor_type()->set_elem_type(kFloat);
}

struct ConvCase {
  std::string act;
  std::vector<float> params;
  int64_t group = 1;
  bool residual = false;  // an Add after the FusedConv (chain continues)
};

std::string fused_conv_model(const ConvCase& c) {
  testing::ModelBuilder m(17);
  m.import_domain(kMs, 1);
  m.input("x", kFloat, {1, 8, 10, 10});
  random_weights(m, "w", {16, 8 / c.group, 3, 3}, 3, 72 / c.group);
  random_weights(m, "b", {16}, 4);
  auto& n = m.node("FusedConv", {"x", "w", "b"}, {c.residual ? "f" : "y"}, "", kMs);
  add_ints_attr(n, "pads", {1, 1, 1, 1});
  testing::add_int_attr(n, "group", c.group);
  if (!c.act.empty()) add_string_attr(n, "activation", c.act);
  if (!c.params.empty()) add_floats_attr(n, "activation_params", c.params);
  if (c.residual) {
    m.input("r", kFloat, {1, 16, 10, 10});
    declare_float(m, "f");
    m.node("Add", {"f", "r"}, {"y"});
  }
  m.output("y", kFloat, {});
  return m.bytes();
}

TEST(OnednnContribFused, FusedConvActivations) {
  const std::vector<ConvCase> cases = {{"Relu", {}},
                                       {"Tanh", {}},
                                       {"Sigmoid", {}},
                                       {"LeakyRelu", {0.1f}},
                                       {"Clip", {0.f, 6.f}},
                                       {"HardSigmoid", {0.2f, 0.5f}},
                                       {"", {}},
                                       {"Relu", {}, 2},
                                       {"Clip", {-0.5f, 0.5f}, 8},
                                       {"Relu", {}, 1, true}};
  for (const ConvCase& c : cases) {
    std::map<std::string, Tensor> in = {{"x", random_tensor({1, 8, 10, 10}, 1)}};
    if (c.residual) in["r"] = random_tensor({1, 16, 10, 10}, 2);
    expect_matches_reference(fused_conv_model(c), in, {}, "FusedConv " + c.act + " group " + std::to_string(c.group));
  }
}

TEST(OnednnContribFused, FusedConvWithZStaysWithTheReference) {
  testing::ModelBuilder m(17);
  m.import_domain(kMs, 1);
  m.input("x", kFloat, {1, 4, 6, 6}).input("z", kFloat, {1, 4, 6, 6});
  random_weights(m, "w", {4, 4, 1, 1}, 3, 4);
  auto& n = m.node("FusedConv", {"x", "w", "", "z"}, {"y"}, "", kMs);
  add_string_attr(n, "activation", "Relu");
  m.output("y", kFloat, {});
  auto s = make_session(environment({"cpu_onednn", "reference"}, FallbackPolicy::kAllow), m.bytes());
  ASSERT_TRUE(s);
  for (const auto& p : s->placement().nodes) EXPECT_EQ(p.provider, "reference") << p.node_name;
  auto out = s->run({{"x", random_tensor({1, 4, 6, 6}, 1)}, {"z", random_tensor({1, 4, 6, 6}, 2)}});
  ASSERT_TRUE(out.has_value()) << out.status().message();
}

// A model as ONNX Runtime's optimizer saves it (contrib ops already in the
// file): types must flow through FusedConv, QuickGelu and FusedGemm, or
// everything after the first one went to the reference EP untyped.
TEST(OnednnContribFused, ModelSavedByOnnxRuntimeRunsHereWhole) {
  testing::ModelBuilder m(13);
  m.import_domain(kMs, 1);
  m.input("x", kFloat, {1, 3, 8, 8});
  random_weights(m, "w", {4, 3, 3, 3}, 3, 27);
  random_weights(m, "g", {4, 10}, 4, 4);
  auto& conv = m.node("FusedConv", {"x", "w"}, {"c"}, "", kMs);
  add_string_attr(conv, "activation", "Relu");
  add_ints_attr(conv, "pads", {1, 1, 1, 1});
  m.node("QuickGelu", {"c"}, {"q"}, "", kMs);
  m.node("GlobalAveragePool", {"q"}, {"p"});
  m.node("Flatten", {"p"}, {"f"});
  add_string_attr(m.node("FusedGemm", {"f", "g"}, {"h"}, "", kMs), "activation", "Relu");
  m.node("Sigmoid", {"h"}, {"y"});
  m.output("y", kFloat, {});
  expect_matches_reference(m.bytes(), {{"x", random_tensor({1, 3, 8, 8}, 5)}}, {}, "ORT-optimized chain");
}

std::string fused_gemm_model(const std::string& act, float act_alpha, bool trans_b, float alpha) {
  testing::ModelBuilder m(17);
  m.import_domain(kMs, 1);
  m.input("a", kFloat, {6, 32});
  random_weights(m, "b", trans_b ? std::vector<int64_t>{24, 32} : std::vector<int64_t>{32, 24}, 5, 32);
  random_weights(m, "c", {24}, 6);
  auto& n = m.node("FusedGemm", {"a", "b", "c"}, {"y"}, "", kMs);
  testing::add_int_attr(n, "transB", trans_b ? 1 : 0);
  add_float_attr(n, "alpha", alpha);
  add_string_attr(n, "activation", act);
  if (act_alpha != 0.f) add_float_attr(n, "activation_alpha", act_alpha);
  m.output("y", kFloat, {});
  return m.bytes();
}

TEST(OnednnContribFused, FusedGemmActivations) {
  const std::map<std::string, Tensor> in = {{"a", random_tensor({6, 32}, 1)}};
  for (const char* act : {"Relu", "Sigmoid", "Tanh", "Softplus"})
    expect_matches_reference(fused_gemm_model(act, 0.f, true, 1.f), in, {}, act);
  expect_matches_reference(fused_gemm_model("LeakyRelu", 0.3f, false, 0.5f), in, {}, "LeakyRelu alpha 0.3");
  expect_matches_reference(fused_gemm_model("Elu", 0.7f, true, 2.f), in, {}, "Elu alpha 0.7");
  expect_matches_reference(fused_gemm_model("HardSigmoid", 0.f, false, 1.f), in, {}, "HardSigmoid defaults");
}

struct MatMulCase {
  std::vector<int64_t> a, b;
  int64_t trans_a = 0, trans_b = 0;
  float alpha = 1.f;
  bool b_constant = false;
  bool relu_after = false;
};

std::string fused_matmul_model(const MatMulCase& c) {
  testing::ModelBuilder m(17);
  m.import_domain(kMs, 1);
  m.input("a", kFloat, c.a);
  if (c.b_constant) random_weights(m, "b", c.b, 7, c.b[c.b.size() - (c.trans_b ? 1 : 2)]);
  else m.input("b", kFloat, c.b);
  auto& n = m.node("FusedMatMul", {"a", "b"}, {c.relu_after ? "f" : "y"}, "", kMs);
  testing::add_int_attr(n, "transA", c.trans_a);
  testing::add_int_attr(n, "transB", c.trans_b);
  add_float_attr(n, "alpha", c.alpha);
  if (c.relu_after) {
    declare_float(m, "f");
    m.node("Relu", {"f"}, {"y"});
  }
  m.output("y", kFloat, {});
  return m.bytes();
}

TEST(OnednnContribFused, FusedMatMulTransposesAndAlpha) {
  const std::vector<MatMulCase> cases = {
      {{5, 8}, {8, 6}},
      {{5, 8}, {6, 8}, 0, 1, 0.125f},
      {{8, 5}, {8, 6}, 1, 0, 2.f},
      {{2, 3, 8, 5}, {2, 3, 6, 8}, 1, 1, 0.5f},          // attention-like, both computed
      {{2, 4, 8}, {6, 8}, 0, 1, 0.25f, true},            // constant B^T: scaled once, rows folded
      {{2, 4, 8}, {8, 6}, 0, 0, 3.f, false, true},       // alpha then a Relu chain
      {{2, 1, 5, 8}, {3, 6, 8}, 0, 1, 1.5f, false, true}};  // broadcast batch
  for (const MatMulCase& c : cases) {
    std::map<std::string, Tensor> in = {{"a", random_tensor(c.a, 1)}};
    if (!c.b_constant) in["b"] = random_tensor(c.b, 2);
    expect_matches_reference(fused_matmul_model(c), in, {}, "FusedMatMul transA " + std::to_string(c.trans_a) +
                                                                 " transB " + std::to_string(c.trans_b));
  }
}

// Plain ONNX ops the extended-level passes fuse first (Conv + Relu, MatMul +
// bias + Relu, Transpose + MatMul + Div): cpu_onednn runs the fused graph.
TEST(OnednnContribFused, GraphsFusedByThePasses) {
  testing::ModelBuilder m(17);
  m.input("x", kFloat, {1, 4, 6, 6}).input("k", kFloat, {3, 24});
  random_weights(m, "w", {6, 4, 3, 3}, 3, 36);
  random_weights(m, "fc", {96, 24}, 4, 96);
  random_weights(m, "bias", {24}, 5);
  m.float_initializer("scale", {}, {4.f});
  m.node("Conv", {"x", "w"}, {"c"});
  m.node("Relu", {"c"}, {"r"});
  testing::add_int_attr(m.node("Flatten", {"r"}, {"f"}), "axis", 1);
  m.node("MatMul", {"f", "fc"}, {"mm"});
  m.node("Add", {"mm", "bias"}, {"h0"});
  m.node("Relu", {"h0"}, {"h"});
  testing::add_ints_attr(m.node("Transpose", {"k"}, {"kt"}), "perm", {1, 0});
  m.node("MatMul", {"h", "kt"}, {"s"});
  m.node("Div", {"s", "scale"}, {"y"});
  m.output("y", kFloat, {});
  const std::string model = m.bytes();
  auto s = make_session(onednn_env(), model);
  ASSERT_TRUE(s);
  std::map<std::string, int> ops;
  for (const auto& n : s->placement().nodes) ++ops[n.op_type];
  EXPECT_EQ(ops["FusedConv"], 1);
  EXPECT_EQ(ops["FusedGemm"], 1);
  EXPECT_EQ(ops["FusedMatMul"], 1);
  expect_matches_reference(model, {{"x", random_tensor({1, 4, 6, 6}, 1)}, {"k", random_tensor({3, 24}, 2)}});
}

}  // namespace
}  // namespace loom::ep_testing
