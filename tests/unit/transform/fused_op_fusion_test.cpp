// ONNX Runtime's extended MatMul / Conv / Gemm fusions into its contrib ops:
// conv_activation_fusion (Conv -> activation = FusedConv), gemm_activation_fusion
// (Gemm -> activation = FusedGemm), matmul_add_fusion (2-D MatMul + constant
// bias = Gemm) and fused_matmul_fusion (Transpose / scalar Mul / Div around a
// MatMul = FusedMatMul). Each fused model computes what it did unfused (the
// reference EP); near misses keep their ops.
#include <gtest/gtest.h>

#include "common/model_builder.h"
#include "unit/transform/fusion_checks.h"

namespace loom {
namespace {

constexpr auto kFloat = ::onnx::TensorProto::FLOAT;
using testing::float_tensor;
using testing::wave;

TEST(FusedOpFusion, PassesAreListedAtExtended) {
  for (const char* p : {"conv_activation_fusion", "gemm_activation_fusion", "matmul_add_fusion", "fused_matmul_fusion"})
    testing::expect_listed_pass(p, OptimizationLevel::kExtended);
}

// --- Conv -> activation

struct ConvOptions {
  std::string act = "Relu";
  bool leak_conv = false;   // the Conv output is also a graph output
  bool second_reader = false;  // another node reads the Conv output
  bool clip_bound_input = false;  // Clip's max is a graph input
};

std::string conv_model(const ConvOptions& o) {
  testing::ModelBuilder m(17);
  m.input("x", kFloat, {1, 3, 6, 6});
  m.float_initializer("w", {4, 3, 3, 3}, wave(108, 0.3f)).float_initializer("b", {4}, wave(4, 0.5f, 1.f));
  auto& conv = m.node("Conv", {"x", "w", "b"}, {"c"});
  testing::add_ints_attr(conv, "pads", {1, 1, 1, 1});
  if (o.act == "Clip") {
    m.float_initializer("lo", {}, {-0.5f});
    if (o.clip_bound_input) m.input("hi", kFloat, {});
    else m.float_initializer("hi", {}, {0.75f});
    m.node("Clip", {"c", "lo", "hi"}, {"y"});
  } else {
    auto& act = m.node(o.act, {"c"}, {"y"});
    if (o.act == "LeakyRelu") testing::add_float_attr(act, "alpha", 0.2f);
    if (o.act == "HardSigmoid") testing::add_float_attr(act, "alpha", 0.3f);
  }
  m.output("y", kFloat, {});
  if (o.leak_conv) m.output("c", kFloat, {});
  if (o.second_reader) {
    m.node("Neg", {"c"}, {"z"});
    m.output("z", kFloat, {});
  }
  return m.bytes();
}

std::map<std::string, Tensor> conv_inputs(bool hi = false) {
  std::map<std::string, Tensor> in = {{"x", float_tensor({1, 3, 6, 6}, wave(108, 2.f))}};
  if (hi) in["hi"] = float_tensor({}, {0.75f});
  return in;
}

TEST(FusedOpFusion, ConvActivationBecomesFusedConv) {
  for (const char* act : {"Relu", "Tanh", "Sigmoid", "LeakyRelu", "HardSigmoid", "Clip"}) {
    ConvOptions o;
    o.act = act;
    testing::expect_fuses(conv_model(o), conv_inputs(), {{"com.microsoft.FusedConv", 1}}, act);
  }
}

TEST(FusedOpFusion, ConvActivationNearMisses) {
  ConvOptions leak;
  leak.leak_conv = true;
  testing::expect_no_fusion(conv_model(leak), conv_inputs(), "Conv", "Conv output is a graph output");
  ConvOptions second;
  second.second_reader = true;
  testing::expect_no_fusion(conv_model(second), conv_inputs(), "Conv", "Conv output read elsewhere");
  ConvOptions bound;
  bound.act = "Clip";
  bound.clip_bound_input = true;
  testing::expect_no_fusion(conv_model(bound), conv_inputs(true), "Conv", "Clip bound computed at run time");
  ConvOptions other;
  other.act = "Softsign";  // not among ORT's FusedConv activations
  testing::expect_no_fusion(conv_model(other), conv_inputs(), "Conv", "Softsign");
}

// --- Conv -> Add (residual) [-> Relu]

// x -> Conv -> Add(conv, r) [-> Relu] -> y, with r [rdims] an input.
std::string residual_model(bool relu, const Dims& rdims = {1, 4, 6, 6}, bool bias = true, bool add_read_twice = false,
                           const Dims& xdims = {1, 3, 6, 6}) {
  testing::ModelBuilder m(17);
  m.input("x", kFloat, xdims);
  m.input("r", kFloat, rdims);
  m.float_initializer("w", {4, 3, 3, 3}, wave(108, 0.3f)).float_initializer("b", {4}, wave(4, 0.5f, 1.f));
  auto& conv = m.node("Conv", bias ? std::vector<std::string>{"x", "w", "b"} : std::vector<std::string>{"x", "w"},
                      {"c"});
  testing::add_ints_attr(conv, "pads", {1, 1, 1, 1});
  m.node("Add", {"r", "c"}, {relu ? "s" : "y"});  // the residual first: either order matches
  if (relu) m.node("Relu", {"s"}, {"y"});
  m.output("y", kFloat, {1, 4, 6, 6});
  if (add_read_twice) {
    m.node("Neg", {relu ? "s" : "y"}, {"n"});
    m.output("n", kFloat, {1, 4, 6, 6});
  }
  return m.bytes();
}

std::map<std::string, Tensor> residual_inputs(const Dims& rdims = {1, 4, 6, 6}) {
  int64_t n = 1;
  for (int64_t d : rdims) n *= d;
  return {{"x", float_tensor({1, 3, 6, 6}, wave(108, 2.f))},
          {"r", float_tensor(rdims, wave(static_cast<size_t>(n), 1.5f, 0.4f))}};
}

TEST(FusedOpFusion, ConvAddReluBecomesFusedConvWithZ) {
  testing::expect_fuses(residual_model(true), residual_inputs(), {{"com.microsoft.FusedConv", 1}}, "Conv + Add + Relu");
  testing::expect_fuses(residual_model(false), residual_inputs(), {{"com.microsoft.FusedConv", 1}}, "Conv + Add");
  testing::expect_fuses(residual_model(true, {1, 4, 6, 6}, false), residual_inputs(), {{"com.microsoft.FusedConv", 1}},
                        "no bias: B stays empty, Z is input 3");
  testing::expect_fuses(residual_model(true, {1, 4, 6, 6}, true, true), residual_inputs(),
                        {{"com.microsoft.FusedConv", 1}, {"Relu", 1}, {"Neg", 1}},
                        "the sum is read twice: Conv + Add fuse, the Relu stays");
}

TEST(FusedOpFusion, ConvAddFusesWithSymbolicDims) {
  // x [1, 3, d2, d3] and r [1, 4, d2, d3]: the padded 3x3 conv keeps d2 and
  // d3 (symbolic shape propagation), so Z is known to match.
  testing::expect_fuses(residual_model(true, {1, 4, -1, -1}, true, false, {1, 3, -1, -1}), residual_inputs(),
                        {{"com.microsoft.FusedConv", 1}}, "symbolic spatial dims");
}

TEST(FusedOpFusion, ConvAddNearMisses) {
  // Z must have the Conv output's shape: a broadcast add is not a residual.
  testing::expect_fuses(residual_model(true, {1, 4, 1, 1}), residual_inputs({1, 4, 1, 1}), {{"Conv", 1}, {"Add", 1}, {"Relu", 1}},
                        "broadcast residual");
}

// --- Gemm -> activation

std::string gemm_model(const std::string& act, bool second_reader = false) {
  testing::ModelBuilder m(17);
  m.input("a", kFloat, {3, 5});
  m.float_initializer("b", {4, 5}, wave(20, 0.4f)).float_initializer("c", {4}, wave(4, 0.5f, 1.f));
  auto& g = m.node("Gemm", {"a", "b", "c"}, {"g"});
  testing::add_int_attr(g, "transB", 1);
  testing::add_float_attr(g, "alpha", 0.5f);
  auto& a = m.node(act, {"g"}, {"y"});
  if (act == "LeakyRelu" || act == "Elu") testing::add_float_attr(a, "alpha", 0.3f);
  m.output("y", kFloat, {});
  if (second_reader) {
    m.node("Neg", {"g"}, {"z"});
    m.output("z", kFloat, {});
  }
  return m.bytes();
}

TEST(FusedOpFusion, GemmActivationBecomesFusedGemm) {
  const std::map<std::string, Tensor> in = {{"a", float_tensor({3, 5}, wave(15, 2.f))}};
  for (const char* act : {"Relu", "LeakyRelu", "Elu", "Sigmoid", "Tanh", "Softsign", "Softplus", "HardSigmoid"})
    testing::expect_fuses(gemm_model(act), in, {{"com.microsoft.FusedGemm", 1}}, act);
  testing::expect_no_fusion(gemm_model("Relu", true), in, "Gemm", "Gemm output read elsewhere");
  testing::expect_no_fusion(gemm_model("Exp"), in, "Gemm", "Exp is not a Gemm activation");
}

// --- MatMul + Add -> Gemm (-> FusedGemm)

struct MatMulAddOptions {
  std::vector<int64_t> a_dims = {3, 4};
  std::vector<int64_t> bias_dims = {5};
  bool bias_input = false;   // bias is a graph input
  bool bias_first = false;   // Add(bias, mm)
  bool weights_input = false;
  std::string act;           // optional activation after the Add
};

std::string matmul_add_model(const MatMulAddOptions& o) {
  testing::ModelBuilder m(17);
  m.input("a", kFloat, o.a_dims);
  if (o.weights_input) m.input("w", kFloat, {4, 5});
  else m.float_initializer("w", {4, 5}, wave(20, 0.4f));
  if (o.bias_input) m.input("bias", kFloat, o.bias_dims);
  else m.float_initializer("bias", o.bias_dims, wave(5, 0.5f, 1.f));
  m.node("MatMul", {"a", "w"}, {"mm"});
  const std::string sum = o.act.empty() ? "y" : "s";
  if (o.bias_first) m.node("Add", {"bias", "mm"}, {sum});
  else m.node("Add", {"mm", "bias"}, {sum});
  if (!o.act.empty()) m.node(o.act, {"s"}, {"y"});
  m.output("y", kFloat, {});
  return m.bytes();
}

std::map<std::string, Tensor> matmul_add_inputs(const MatMulAddOptions& o) {
  size_t n = 1;
  for (int64_t d : o.a_dims) n *= static_cast<size_t>(d);
  std::map<std::string, Tensor> in = {{"a", float_tensor(o.a_dims, wave(n, 2.f))}};
  if (o.bias_input) in["bias"] = float_tensor(o.bias_dims, wave(5, 0.5f, 1.f));
  if (o.weights_input) in["w"] = float_tensor({4, 5}, wave(20, 0.4f));
  return in;
}

TEST(FusedOpFusion, MatMulAddBecomesGemm) {
  MatMulAddOptions o;
  testing::expect_fuses(matmul_add_model(o), matmul_add_inputs(o), {{"Gemm", 1}}, "bias [N]");
  o.bias_dims = {1, 5};
  o.bias_first = true;
  testing::expect_fuses(matmul_add_model(o), matmul_add_inputs(o), {{"Gemm", 1}}, "bias [1, N] first");
  MatMulAddOptions relu;
  relu.act = "Relu";
  testing::expect_fuses(matmul_add_model(relu), matmul_add_inputs(relu), {{"com.microsoft.FusedGemm", 1}},
                        "MatMul + Add + Relu");
}

TEST(FusedOpFusion, MatMulAddNearMisses) {
  MatMulAddOptions input_bias;
  input_bias.bias_input = true;
  testing::expect_no_fusion(matmul_add_model(input_bias), matmul_add_inputs(input_bias), "MatMul", "bias not constant");
  MatMulAddOptions three_d;
  three_d.a_dims = {2, 3, 4};
  testing::expect_no_fusion(matmul_add_model(three_d), matmul_add_inputs(three_d), "MatMul", "3-D A");
  MatMulAddOptions weights;
  weights.weights_input = true;
  testing::expect_no_fusion(matmul_add_model(weights), matmul_add_inputs(weights), "MatMul", "B not constant");
}

// --- Transpose / scale around MatMul -> FusedMatMul

struct FusedMatMulOptions {
  bool transpose_a = false, transpose_b = false;
  std::string scale_after;  // "Mul" / "Div" / ""
  bool scale_input = false;  // a * 0.5 before the MatMul
  bool leak_transpose = false;
};

std::string fused_matmul_model(const FusedMatMulOptions& o) {
  testing::ModelBuilder m(17);
  // a [2, 3, 4] (or its transpose [2, 4, 3]), b [2, 4, 5] (or [2, 5, 4]).
  m.input("a", kFloat, o.transpose_a ? std::vector<int64_t>{2, 4, 3} : std::vector<int64_t>{2, 3, 4});
  m.input("b", kFloat, o.transpose_b ? std::vector<int64_t>{2, 5, 4} : std::vector<int64_t>{2, 4, 5});
  m.float_initializer("s", {}, {0.125f});
  std::string a = "a", b = "b";
  if (o.transpose_a) {
    testing::add_ints_attr(m.node("Transpose", {"a"}, {"at"}), "perm", {0, 2, 1});
    a = "at";
  }
  if (o.scale_input) {
    m.node("Mul", {a, "s"}, {"as"});
    a = "as";
  }
  if (o.transpose_b) {
    testing::add_ints_attr(m.node("Transpose", {"b"}, {"bt"}), "perm", {0, 2, 1});
    b = "bt";
  }
  m.node("MatMul", {a, b}, {o.scale_after.empty() ? "y" : "mm"});
  if (!o.scale_after.empty()) m.node(o.scale_after, {"mm", "s"}, {"y"});
  m.output("y", kFloat, {});
  if (o.leak_transpose) m.output("bt", kFloat, {});
  return m.bytes();
}

std::map<std::string, Tensor> fused_matmul_inputs(const FusedMatMulOptions& o) {
  return {{"a", float_tensor(o.transpose_a ? Dims{2, 4, 3} : Dims{2, 3, 4}, wave(24, 1.5f))},
          {"b", float_tensor(o.transpose_b ? Dims{2, 5, 4} : Dims{2, 4, 5}, wave(40, 1.f, 0.3f))}};
}

TEST(FusedOpFusion, TransposeAndScaleBecomeFusedMatMul) {
  const std::map<std::string, int> fused = {{"com.microsoft.FusedMatMul", 1}};
  FusedMatMulOptions o;
  o.transpose_b = true;
  testing::expect_fuses(fused_matmul_model(o), fused_matmul_inputs(o), fused, "transB");
  o.transpose_a = true;
  o.scale_after = "Div";
  testing::expect_fuses(fused_matmul_model(o), fused_matmul_inputs(o), fused, "transA transB / s");
  FusedMatMulOptions mul;
  mul.scale_after = "Mul";
  mul.scale_input = true;
  testing::expect_fuses(fused_matmul_model(mul), fused_matmul_inputs(mul), fused, "(a * s) x b * s");
}

TEST(FusedOpFusion, FusedMatMulNearMisses) {
  // b [4, 2, 5] -> [2, 4, 5]: a batch transpose stays a Transpose.
  const std::map<std::string, Tensor> in = {{"a", float_tensor({2, 3, 4}, wave(24, 1.5f))},
                                            {"b", float_tensor({4, 2, 5}, wave(40, 1.f, 0.3f))}};
  testing::ModelBuilder m(17);
  m.input("a", kFloat, {2, 3, 4}).input("b", kFloat, {4, 2, 5});
  testing::add_ints_attr(m.node("Transpose", {"b"}, {"bt"}), "perm", {1, 0, 2});
  m.node("MatMul", {"a", "bt"}, {"y"});
  m.output("y", kFloat, {});
  testing::expect_no_fusion(m.bytes(), in, "Transpose", "batch transpose");
  // x / 3 != x * (1 / 3) bitwise: only power-of-two divisors are fused.
  testing::ModelBuilder d(17);
  d.input("a", kFloat, {2, 3, 4}).input("b", kFloat, {2, 4, 5}).float_initializer("s", {}, {3.f});
  d.node("MatMul", {"a", "b"}, {"mm"});
  d.node("Div", {"mm", "s"}, {"y"});
  d.output("y", kFloat, {});
  testing::expect_no_fusion(d.bytes(), fused_matmul_inputs({}), "MatMul", "Div by 3");
  FusedMatMulOptions leak;
  leak.transpose_b = true;
  leak.leak_transpose = true;
  testing::expect_no_fusion(fused_matmul_model(leak), fused_matmul_inputs(leak), "MatMul", "transpose read elsewhere");
}

}  // namespace
}  // namespace loom
