// conv_scale_folding (basic): Conv -> Mul / Div by, Add / Sub of a per-channel
// or scalar constant becomes one Conv computing the same; near misses keep
// the element-wise op.
#include <gtest/gtest.h>

#include "common/model_builder.h"
#include "unit/transform/fusion_checks.h"

namespace loom {
namespace {

constexpr auto kFloat = ::onnx::TensorProto::FLOAT;
constexpr auto kBasic = OptimizationLevel::kBasic;
using testing::wave;

struct ScaleOptions {
  std::string op = "Mul";
  std::vector<int64_t> c_dims = {6, 1, 1};
  bool constant_first = false;  // op(c, conv)
  bool bias = true;
  bool c_is_input = false;
  bool weight_is_input = false;
  bool leak_conv = false;
  bool zero_in_c = false;
  bool transposed = false;
};

// x [1,4,5,5] -> Conv (3x3, M = 6) -> op(c) -> y
std::string scale_model(const ScaleOptions& o) {
  testing::ModelBuilder m(17);
  m.input("x", kFloat, {1, 4, 5, 5});
  const std::vector<int64_t> w_dims = o.transposed ? std::vector<int64_t>{4, 6, 3, 3} : std::vector<int64_t>{6, 4, 3, 3};
  if (o.weight_is_input) m.input("w", kFloat, w_dims);
  else m.float_initializer("w", w_dims, wave(216, 0.3f));
  m.float_initializer("b", {6}, wave(6, 0.5f, 1.f));
  size_t n = 1;
  for (int64_t d : o.c_dims) n *= static_cast<size_t>(d);
  std::vector<float> c = wave(n, 1.5f, 2.f);
  for (float& v : c) v += v >= 0 ? 0.25f : -0.25f;
  if (o.zero_in_c) c[0] = 0.f;
  if (o.c_is_input) m.input("c", kFloat, o.c_dims);
  else m.float_initializer("c", o.c_dims, c);
  auto& conv = o.bias ? m.node(o.transposed ? "ConvTranspose" : "Conv", {"x", "w", "b"}, {"conv"})
                      : m.node(o.transposed ? "ConvTranspose" : "Conv", {"x", "w"}, {"conv"});
  testing::add_ints_attr(conv, "pads", {1, 1, 1, 1});
  if (o.constant_first) m.node(o.op, {"c", "conv"}, {"y"});
  else m.node(o.op, {"conv", "c"}, {"y"});
  m.output("y", kFloat, {});
  if (o.leak_conv) m.output("conv", kFloat, {});
  return m.bytes();
}

std::map<std::string, Tensor> inputs(const ScaleOptions& o) {
  std::map<std::string, Tensor> in = {{"x", testing::float_tensor({1, 4, 5, 5}, wave(100, 2.f))}};
  if (o.weight_is_input) in["w"] = testing::float_tensor(o.transposed ? Dims{4, 6, 3, 3} : Dims{6, 4, 3, 3}, wave(216, 0.3f));
  if (o.c_is_input) {
    size_t n = 1;
    for (int64_t d : o.c_dims) n *= static_cast<size_t>(d);
    in["c"] = testing::float_tensor(o.c_dims, wave(n, 1.5f, 2.f));
  }
  return in;
}

void expect_folds(const ScaleOptions& o, const std::string& what) {
  testing::expect_fuses(scale_model(o), inputs(o), {{o.transposed ? "ConvTranspose" : "Conv", 1}}, what, kBasic, 1e-4);
}

void expect_kept(const ScaleOptions& o, const std::string& what) {
  testing::expect_no_fusion(scale_model(o), inputs(o), o.op, what, kBasic);
}

TEST(ConvScaleFoldingTest, Listed) { testing::expect_listed_pass("conv_scale_folding", kBasic); }

TEST(ConvScaleFoldingTest, FoldsPerChannelAndScalarConstants) {
  for (const std::string op : {"Mul", "Add", "Div", "Sub"}) {
    for (const std::vector<int64_t>& dims : {std::vector<int64_t>{6, 1, 1}, {1, 6, 1, 1}, {}, {1}, {1, 1, 1, 1}}) {
      for (bool bias : {true, false}) {
        ScaleOptions o;
        o.op = op;
        o.c_dims = dims;
        o.bias = bias;
        expect_folds(o, op + " by " + dims_string(dims) + (bias ? " with bias" : " without bias"));
      }
    }
  }
  ScaleOptions swapped;
  swapped.constant_first = true;
  expect_folds(swapped, "Mul(c, conv)");
  swapped.op = "Add";
  expect_folds(swapped, "Add(c, conv)");
  ScaleOptions transposed;
  transposed.transposed = true;
  expect_folds(transposed, "ConvTranspose * c");
}

TEST(ConvScaleFoldingTest, ChainAfterBatchNormFoldsToOneConv) {
  testing::ModelBuilder m(17);
  m.input("x", kFloat, {1, 4, 5, 5});
  m.float_initializer("w", {6, 4, 3, 3}, wave(216, 0.3f));
  m.float_initializer("scale", {6}, wave(6, 1.5f, 2.f));
  m.float_initializer("shift", {6}, wave(6, 0.7f, 3.f));
  m.float_initializer("mean", {6}, wave(6, 0.4f, 4.f));
  m.float_initializer("var", {6}, {0.5f, 1.f, 1.5f, 2.f, 2.5f, 3.f});
  m.float_initializer("k", {6, 1, 1}, wave(6, 2.f, 5.f));
  m.float_initializer("d", {1, 6, 1, 1}, wave(6, 1.f, 6.f));
  m.node("Conv", {"x", "w"}, {"c"});
  m.node("BatchNormalization", {"c", "scale", "shift", "mean", "var"}, {"n"});
  m.node("Mul", {"n", "k"}, {"s"});
  m.node("Add", {"d", "s"}, {"y"});
  m.output("y", kFloat, {});
  testing::expect_fuses(m.bytes(), {{"x", testing::float_tensor({1, 4, 5, 5}, wave(100, 2.f))}}, {{"Conv", 1}},
                        "Conv, BN, Mul, Add", kBasic, 1e-4);
}

TEST(ConvScaleFoldingTest, NearMisses) {
  ScaleOptions spatial;
  spatial.c_dims = {6, 5, 5};
  expect_kept(spatial, "constant varies over space");
  ScaleOptions last_axis;
  last_axis.c_dims = {1, 1, 5};
  expect_kept(last_axis, "constant varies over the last axis");
  ScaleOptions grows;
  grows.c_dims = {2, 1, 1, 1, 1};
  expect_kept(grows, "constant of higher rank");
  ScaleOptions leak;
  leak.leak_conv = true;
  expect_kept(leak, "conv output also a graph output");
  ScaleOptions c_input;
  c_input.c_is_input = true;
  expect_kept(c_input, "scale not constant");
  ScaleOptions w_input;
  w_input.weight_is_input = true;
  expect_kept(w_input, "weight not constant");
  ScaleOptions divide_first;
  divide_first.op = "Div";
  divide_first.constant_first = true;
  expect_kept(divide_first, "c / conv");
  ScaleOptions by_zero;
  by_zero.op = "Div";
  by_zero.zero_in_c = true;
  expect_kept(by_zero, "division by a zero channel");
}

}  // namespace
}  // namespace loom
