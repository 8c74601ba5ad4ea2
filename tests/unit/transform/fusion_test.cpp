// Extended-level fusions: each pattern fuses (op counts after), near misses
// do not, and the model computes the same before and after (reference EP,
// optimization disabled vs extended, same inputs).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "common/model_builder.h"
#include "common/test_env.h"
#include "fusion_checks.h"

namespace loom {
namespace {

constexpr auto kFloat = ::onnx::TensorProto::FLOAT;

using testing::expect_fuses;
using testing::expect_no_fusion;
using testing::op_counts;
using testing::session;
using testing::wave;

// ---- LayerNorm written out ----
struct LnOptions {
  int64_t axis = -1;          // ReduceMean axes
  bool eps_after_sqrt = false;  // Sqrt(v) + eps: not a LayerNorm
  bool leak_diff = false;     // d = x - mean also a graph output
  bool affine = true;
};

std::string layer_norm_model(const LnOptions& o) {
  testing::ModelBuilder m(14);
  m.input("x", kFloat, {2, 3, 8});
  m.float_initializer("two", {}, {2.f});
  m.float_initializer("eps", {}, {1e-5f});
  m.float_initializer("gamma", {8}, wave(8, 1.f, 1.f));
  m.float_initializer("beta", {8}, wave(8, 0.5f, 2.f));
  testing::add_ints_attr(m.node("ReduceMean", {"x"}, {"mean"}), "axes", {o.axis});
  m.node("Sub", {"x", "mean"}, {"d"});
  m.node("Pow", {"d", "two"}, {"sq"});
  testing::add_ints_attr(m.node("ReduceMean", {"sq"}, {"var"}), "axes", {o.axis});
  if (o.eps_after_sqrt) {
    m.node("Sqrt", {"var"}, {"sd0"});
    m.node("Add", {"sd0", "eps"}, {"sd"});
  } else {
    m.node("Add", {"var", "eps"}, {"ve"});
    m.node("Sqrt", {"ve"}, {"sd"});
  }
  m.node("Div", {"d", "sd"}, {o.affine ? "n" : "y"});
  if (o.affine) {
    m.node("Mul", {"n", "gamma"}, {"g"});
    m.node("Add", {"beta", "g"}, {"y"});
  }
  m.output("y", kFloat, {});
  if (o.leak_diff) m.output("d", kFloat, {});
  return m.bytes();
}

std::map<std::string, Tensor> x_input(Dims dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return {{"x", testing::float_tensor(dims, wave(static_cast<size_t>(n), 2.f))}};
}

TEST(FusionTest, LayerNormFromItsParts) {
  expect_fuses(layer_norm_model({}), x_input({2, 3, 8}), {{"LayerNormalization", 1}}, "affine");
  LnOptions plain;
  plain.affine = false;
  expect_fuses(layer_norm_model(plain), x_input({2, 3, 8}), {{"LayerNormalization", 1}}, "no gamma/beta");
  LnOptions last_axis_by_index;
  last_axis_by_index.axis = 2;
  expect_fuses(layer_norm_model(last_axis_by_index), x_input({2, 3, 8}), {{"LayerNormalization", 1}}, "axes [2]");
}

TEST(FusionTest, LayerNormNearMisses) {
  LnOptions wrong_axis;
  wrong_axis.axis = 1;
  expect_no_fusion(layer_norm_model(wrong_axis), x_input({2, 3, 8}), "ReduceMean", "mean over axis 1");
  LnOptions eps_after;
  eps_after.eps_after_sqrt = true;
  expect_no_fusion(layer_norm_model(eps_after), x_input({2, 3, 8}), "ReduceMean", "epsilon after Sqrt");
  LnOptions leak;
  leak.leak_diff = true;
  expect_no_fusion(layer_norm_model(leak), x_input({2, 3, 8}), "ReduceMean", "intermediate also an output");
}

TEST(FusionTest, LayerNormAfterAComputedReshapeFusesOnceShapesAreReinferred) {
  // x.view(x.size(0), x.size(1), 8) then LayerNorm written out: ONNX's
  // load-time inference cannot see through the Shape chain, so the width
  // (needed to check gamma) is known only after reshape_shape_folding and
  // shape_inference have run.
  testing::ModelBuilder m(14);
  m.input("in", kFloat, {-1, -1, 2, 4});
  m.int64_initializer("i0", {}, {0});
  m.int64_initializer("i1", {}, {1});
  m.int64_initializer("axes", {1}, {0});
  m.int64_initializer("width", {1}, {8});
  m.float_initializer("two", {}, {2.f});
  m.float_initializer("eps", {}, {1e-5f});
  m.float_initializer("gamma", {8}, wave(8, 1.f, 1.f));
  m.node("Shape", {"in"}, {"s"});
  m.node("Gather", {"s", "i0"}, {"g0"});
  m.node("Gather", {"s", "i1"}, {"g1"});
  m.node("Unsqueeze", {"g0", "axes"}, {"u0"});
  m.node("Unsqueeze", {"g1", "axes"}, {"u1"});
  testing::add_int_attr(m.node("Concat", {"u0", "u1", "width"}, {"shape"}), "axis", 0);
  m.node("Reshape", {"in", "shape"}, {"x"});
  testing::add_ints_attr(m.node("ReduceMean", {"x"}, {"mean"}), "axes", {-1});
  m.node("Sub", {"x", "mean"}, {"d"});
  m.node("Pow", {"d", "two"}, {"sq"});
  testing::add_ints_attr(m.node("ReduceMean", {"sq"}, {"var"}), "axes", {-1});
  m.node("Add", {"var", "eps"}, {"ve"});
  m.node("Sqrt", {"ve"}, {"sd"});
  m.node("Div", {"d", "sd"}, {"n"});
  m.node("Mul", {"n", "gamma"}, {"y"});
  m.output("y", kFloat, {});
  expect_fuses(m.bytes(), {{"in", testing::float_tensor({2, 3, 2, 4}, wave(48, 2.f))}},
               {{"Reshape", 1}, {"LayerNormalization", 1}}, "LayerNorm after a computed Reshape");
}

// ---- GELU (erf) and BiasGelu ----
// form 0: (x * (1 + e)) * 0.5; 1: x * ((1 + e) * 0.5); 2: (x * 0.5) * (1 + e)
std::string gelu_model(int form, bool bias, bool leak_erf = false, float divisor = 1.4142135f) {
  testing::ModelBuilder m(14);
  m.input("in", kFloat, {2, 4, 6});
  m.float_initializer("b", {6}, wave(6, 0.3f));
  m.float_initializer("sqrt2", {}, {divisor});
  m.float_initializer("one", {}, {1.f});
  m.float_initializer("half", {}, {0.5f});
  if (bias) m.node("Add", {"b", "in"}, {"x"});
  else m.node("Identity", {"in"}, {"x"});
  m.node("Div", {"x", "sqrt2"}, {"xs"});
  m.node("Erf", {"xs"}, {"e"});
  m.node("Add", {"one", "e"}, {"a"});
  if (form == 0) {
    m.node("Mul", {"x", "a"}, {"xa"});
    m.node("Mul", {"xa", "half"}, {"y"});
  } else if (form == 1) {
    m.node("Mul", {"a", "half"}, {"ah"});
    m.node("Mul", {"ah", "x"}, {"y"});
  } else {
    m.node("Mul", {"x", "half"}, {"xh"});
    m.node("Mul", {"xh", "a"}, {"y"});
  }
  m.output("y", kFloat, {});
  if (leak_erf) m.output("e", kFloat, {});
  return m.bytes();
}

std::map<std::string, Tensor> in_input() {
  return {{"in", testing::float_tensor({2, 4, 6}, wave(48, 3.f))}};
}

TEST(FusionTest, GeluFormsAndBiasGelu) {
  for (int form : {0, 1, 2}) {
    expect_fuses(gelu_model(form, false), in_input(), {{"com.microsoft.Gelu", 1}}, "form " + std::to_string(form));
    expect_fuses(gelu_model(form, true), in_input(), {{"com.microsoft.BiasGelu", 1}},
                 "biased form " + std::to_string(form));
  }
}

TEST(FusionTest, GeluNearMisses) {
  expect_no_fusion(gelu_model(0, false, true), in_input(), "Erf", "Erf output also a graph output");
  expect_no_fusion(gelu_model(0, false, false, 2.f), in_input(), "Erf", "x / 2 instead of x / sqrt(2)");
}

// ---- SkipLayerNormalization ----
std::string skip_model(bool bias, bool sum_used, bool broadcast_skip) {
  testing::ModelBuilder m(17);
  m.input("a", kFloat, {2, 3, 8});
  m.input("r", kFloat, broadcast_skip ? std::vector<int64_t>{1, 1, 8} : std::vector<int64_t>{2, 3, 8});
  m.float_initializer("bias", {8}, wave(8, 0.2f));
  m.float_initializer("gamma", {8}, wave(8, 1.f, 1.f));
  m.float_initializer("beta", {8}, wave(8, 0.5f, 2.f));
  if (bias) m.node("Add", {"a", "bias"}, {"ab"});
  else m.node("Identity", {"a"}, {"ab"});
  m.node("Add", {"ab", "r"}, {"s"});
  testing::add_int_attr(m.node("LayerNormalization", {"s", "gamma", "beta"}, {"y"}), "axis", -1);
  m.output("y", kFloat, {});
  if (sum_used) {
    m.node("Relu", {"s"}, {"z"});
    m.output("z", kFloat, {});
  }
  return m.bytes();
}

std::map<std::string, Tensor> skip_inputs(bool broadcast_skip) {
  return {{"a", testing::float_tensor({2, 3, 8}, wave(48, 2.f))},
          {"r", broadcast_skip ? testing::float_tensor({1, 1, 8}, wave(8, 1.f, 3.f))
                               : testing::float_tensor({2, 3, 8}, wave(48, 1.f, 3.f))}};
}

TEST(FusionTest, SkipLayerNormWithBiasAndSumOutput) {
  expect_fuses(skip_model(false, false, false), skip_inputs(false), {{"com.microsoft.SkipLayerNormalization", 1}},
               "plain");
  expect_fuses(skip_model(true, false, false), skip_inputs(false), {{"com.microsoft.SkipLayerNormalization", 1}},
               "bias");
  expect_fuses(skip_model(true, true, false), skip_inputs(false),
               {{"com.microsoft.SkipLayerNormalization", 1}, {"Relu", 1}}, "sum also read");
}

TEST(FusionTest, SkipLayerNormNeedsSameShapes) {
  expect_no_fusion(skip_model(false, false, true), skip_inputs(true), "LayerNormalization", "broadcast residual");
}

TEST(FusionTest, BertBlockFusesEndToEnd) {
  // MatMul + bias -> GELU, then the residual Add -> LayerNorm written out:
  // every fusion in one model, applied together to a fixed point.
  testing::ModelBuilder m(14);
  m.input("x", kFloat, {1, 4, 8});
  m.float_initializer("w", {8, 8}, wave(64, 0.3f));
  m.float_initializer("b", {8}, wave(8, 0.1f));
  m.float_initializer("sqrt2", {}, {1.4142135f});
  m.float_initializer("one", {}, {1.f});
  m.float_initializer("half", {}, {0.5f});
  m.float_initializer("two", {}, {2.f});
  m.float_initializer("eps", {}, {1e-12f});
  m.float_initializer("gamma", {8}, wave(8, 1.f, 1.f));
  m.float_initializer("beta", {8}, wave(8, 0.5f, 2.f));
  m.node("MatMul", {"x", "w"}, {"h"});
  m.node("Add", {"b", "h"}, {"hb"});
  m.node("Div", {"hb", "sqrt2"}, {"hs"});
  m.node("Erf", {"hs"}, {"e"});
  m.node("Add", {"e", "one"}, {"a"});
  m.node("Mul", {"hb", "a"}, {"ha"});
  m.node("Mul", {"ha", "half"}, {"g"});
  m.node("Add", {"x", "g"}, {"s"});
  testing::add_ints_attr(m.node("ReduceMean", {"s"}, {"mean"}), "axes", {-1});
  m.node("Sub", {"s", "mean"}, {"d"});
  m.node("Pow", {"d", "two"}, {"sq"});
  testing::add_ints_attr(m.node("ReduceMean", {"sq"}, {"var"}), "axes", {-1});
  m.node("Add", {"var", "eps"}, {"ve"});
  m.node("Sqrt", {"ve"}, {"sd"});
  m.node("Div", {"d", "sd"}, {"n"});
  m.node("Mul", {"n", "gamma"}, {"ng"});
  m.node("Add", {"ng", "beta"}, {"y"});
  m.output("y", kFloat, {});
  expect_fuses(m.bytes(), x_input({1, 4, 8}),
               {{"MatMul", 1}, {"com.microsoft.BiasGelu", 1}, {"com.microsoft.SkipLayerNormalization", 1}},
               "BERT feed-forward block");
}

}  // namespace
}  // namespace loom
