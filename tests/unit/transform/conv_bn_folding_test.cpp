// conv_bn_folding (basic): Conv / ConvTranspose + inference BatchNormalization
// become one convolution computing the same; near misses keep the BN.
#include <gtest/gtest.h>

#include "common/model_builder.h"
#include "unit/transform/fusion_checks.h"

namespace loom {
namespace {

constexpr auto kFloat = ::onnx::TensorProto::FLOAT;
constexpr auto kBasic = OptimizationLevel::kBasic;
using testing::wave;

struct ConvBnOptions {
  bool transposed = false;
  int64_t group = 1;
  bool bias = true;
  bool weight_is_input = false;  // W a graph input: not a constant
  bool mean_is_input = false;
  bool leak_conv = false;        // the conv's output is also a graph output
  bool training_mode = false;
};

// x [1,4,5,5] -> Conv(T) (3x3, M = 6) -> BatchNormalization -> y.
std::string conv_bn_model(const ConvBnOptions& o) {
  const int64_t C = 4, M = 6;
  testing::ModelBuilder m(17);
  m.input("x", kFloat, {1, C, 5, 5});
  const std::vector<int64_t> w_dims =
      o.transposed ? std::vector<int64_t>{C, M / o.group, 3, 3} : std::vector<int64_t>{M, C / o.group, 3, 3};
  const size_t w_count = static_cast<size_t>(w_dims[0] * w_dims[1] * 9);
  if (o.weight_is_input) m.input("w", kFloat, w_dims);
  else m.float_initializer("w", w_dims, wave(w_count, 0.3f));
  m.float_initializer("b", {M}, wave(M, 0.5f, 1.f));
  m.float_initializer("scale", {M}, wave(M, 1.5f, 2.f));
  m.float_initializer("shift", {M}, wave(M, 0.7f, 3.f));
  if (o.mean_is_input) m.input("mean", kFloat, {M});
  else m.float_initializer("mean", {M}, wave(M, 0.4f, 4.f));
  std::vector<float> var = wave(M, 1.f, 5.f);
  for (float& v : var) v = v * v + 0.25f;
  m.float_initializer("var", {M}, var);
  auto& conv = o.bias ? m.node(o.transposed ? "ConvTranspose" : "Conv", {"x", "w", "b"}, {"c"})
                      : m.node(o.transposed ? "ConvTranspose" : "Conv", {"x", "w"}, {"c"});
  testing::add_ints_attr(conv, "pads", {1, 1, 1, 1});
  if (o.group != 1) testing::add_int_attr(conv, "group", o.group);
  auto& bn = m.node("BatchNormalization", {"c", "scale", "shift", "mean", "var"}, {"y"});
  auto* eps = bn.add_attribute();
  eps->set_name("epsilon");
  eps->set_type(::onnx::AttributeProto::FLOAT);
  eps->set_f(1e-3f);
  if (o.training_mode) testing::add_int_attr(bn, "training_mode", 1);
  m.output("y", kFloat, {});
  if (o.leak_conv) m.output("c", kFloat, {});
  return m.bytes();
}

std::map<std::string, Tensor> inputs(const ConvBnOptions& o) {
  std::map<std::string, Tensor> in = {{"x", testing::float_tensor({1, 4, 5, 5}, wave(100, 2.f))}};
  if (o.weight_is_input) {
    const Dims d = o.transposed ? Dims{4, 6 / o.group, 3, 3} : Dims{6, 4 / o.group, 3, 3};
    in["w"] = testing::float_tensor(d, wave(static_cast<size_t>(d[0] * d[1] * 9), 0.3f));
  }
  if (o.mean_is_input) in["mean"] = testing::float_tensor({6}, wave(6, 0.4f, 4.f));
  return in;
}

void expect_folds(const ConvBnOptions& o, const std::string& what) {
  testing::expect_fuses(conv_bn_model(o), inputs(o), {{o.transposed ? "ConvTranspose" : "Conv", 1}}, what, kBasic,
                        1e-4);
}

void expect_kept(const ConvBnOptions& o, const std::string& what) {
  testing::expect_no_fusion(conv_bn_model(o), inputs(o), "BatchNormalization", what, kBasic);
}

TEST(ConvBnFoldingTest, Listed) { testing::expect_listed_pass("conv_bn_folding", kBasic); }

TEST(ConvBnFoldingTest, FoldsIntoConv) {
  expect_folds({}, "conv with bias");
  ConvBnOptions no_bias;
  no_bias.bias = false;
  expect_folds(no_bias, "conv without bias");
  ConvBnOptions grouped;
  grouped.group = 2;
  expect_folds(grouped, "group conv");
}

TEST(ConvBnFoldingTest, FoldsIntoConvTranspose) {
  ConvBnOptions t;
  t.transposed = true;
  expect_folds(t, "conv transpose");
  t.group = 2;
  expect_folds(t, "group conv transpose");
  t.bias = false;
  expect_folds(t, "group conv transpose without bias");
}

TEST(ConvBnFoldingTest, NearMisses) {
  ConvBnOptions leak;
  leak.leak_conv = true;
  expect_kept(leak, "conv output also a graph output");
  ConvBnOptions w_input;
  w_input.weight_is_input = true;
  expect_kept(w_input, "weight not constant");
  ConvBnOptions mean_input;
  mean_input.mean_is_input = true;
  expect_kept(mean_input, "mean not constant");
}

TEST(ConvBnFoldingTest, TrainingModeIsNotFolded) {
  ConvBnOptions training;
  training.training_mode = true;
  auto s = testing::session(conv_bn_model(training), kBasic);
  ASSERT_TRUE(s);
  EXPECT_EQ(testing::op_counts(*s)["BatchNormalization"], 1);
}

}  // namespace
}  // namespace loom
