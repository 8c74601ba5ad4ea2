// conv1d_as_conv2d (extended): a 1-D Conv runs as a 2-D one with a 1 x K
// kernel between two Reshapes, computing exactly what the 1-D node does.
#include <gtest/gtest.h>

#include "common/model_builder.h"
#include "unit/transform/fusion_checks.h"

namespace loom {
namespace {

using P = ::onnx::TensorProto;
using testing::float_tensor;
using testing::wave;

struct Conv1dCase {
  Dims x, w;
  std::vector<std::pair<std::string, std::vector<int64_t>>> ints;
  std::string auto_pad;
  int64_t group = 1;
  bool bias = true;
  std::string activation;  // "" or an op after the conv
};

std::string conv1d_model(const Conv1dCase& c) {
  testing::ModelBuilder m(17);
  m.input("x", P::FLOAT, {-1, c.x[1], -1});
  m.float_initializer("w", c.w, wave(static_cast<size_t>(c.w[0] * c.w[1] * c.w[2]), 0.4f));
  std::vector<std::string> in = {"x", "w"};
  if (c.bias) {
    m.float_initializer("b", {c.w[0]}, wave(static_cast<size_t>(c.w[0]), 0.3f, 1.f));
    in.push_back("b");
  }
  auto& conv = m.node("Conv", in, {c.activation.empty() ? "y" : "c"});
  for (const auto& [name, v] : c.ints) testing::add_ints_attr(conv, name, v);
  if (!c.auto_pad.empty()) testing::add_string_attr(conv, "auto_pad", c.auto_pad);
  if (c.group != 1) testing::add_int_attr(conv, "group", c.group);
  if (!c.activation.empty()) m.node(c.activation, {"c"}, {"y"});
  m.output("y", P::FLOAT, {});
  return m.bytes();
}

std::map<std::string, Tensor> input_for(const Dims& x) {
  return {{"x", float_tensor(x, wave(static_cast<size_t>(x[0] * x[1] * x[2]), 1.5f, 0.2f))}};
}

TEST(Conv1dAsConv2dTest, Listed) { testing::expect_listed_pass("conv1d_as_conv2d", OptimizationLevel::kExtended); }

TEST(Conv1dAsConv2dTest, SameOutputsAsTheOneDimensionalConv) {
  const std::vector<Conv1dCase> cases = {
      {{2, 3, 17}, {4, 3, 5}, {}, "", 1, true, ""},
      {{1, 4, 40}, {6, 4, 3}, {{"strides", {2}}, {"pads", {1, 2}}, {"dilations", {2}}}, "", 1, true, ""},
      {{2, 4, 16}, {8, 2, 3}, {{"kernel_shape", {3}}}, "SAME_UPPER", 2, false, ""},
      {{1, 6, 25}, {6, 1, 7}, {{"pads", {3, 3}}}, "", 6, true, ""},  // depthwise
  };
  for (size_t i = 0; i < cases.size(); ++i)
    testing::expect_fuses(conv1d_model(cases[i]), input_for(cases[i].x), {{"Conv", 1}, {"Reshape", 2}},
                          "case " + std::to_string(i));
  // With an activation after it, the 2-D conv fuses on as usual.
  Conv1dCase relu{{2, 3, 17}, {4, 3, 5}, {{"pads", {2, 2}}}, "", 1, true, "Relu"};
  testing::expect_fuses(conv1d_model(relu), input_for(relu.x), {{"com.microsoft.FusedConv", 1}, {"Reshape", 2}},
                        "Conv + Relu");
}

// ConvTranspose over [N, C, L], W [C, M/g, K].
std::string transpose1d_model(const Dims& x, const Dims& w, const std::vector<std::pair<std::string, std::vector<int64_t>>>& ints,
                              int64_t group, const std::string& auto_pad = "") {
  testing::ModelBuilder m(17);
  m.input("x", P::FLOAT, {-1, x[1], -1});
  m.float_initializer("w", w, wave(static_cast<size_t>(w[0] * w[1] * w[2]), 0.4f));
  m.float_initializer("b", {w[1] * group}, wave(static_cast<size_t>(w[1] * group), 0.3f, 1.f));
  auto& n = m.node("ConvTranspose", {"x", "w", "b"}, {"y"});
  for (const auto& [name, v] : ints) testing::add_ints_attr(n, name, v);
  if (group != 1) testing::add_int_attr(n, "group", group);
  if (!auto_pad.empty()) testing::add_string_attr(n, "auto_pad", auto_pad);
  m.output("y", P::FLOAT, {});
  return m.bytes();
}

TEST(Conv1dAsConv2dTest, ConvTransposeToo) {
  const Dims x = {2, 4, 9};
  const auto in = input_for(x);
  testing::expect_fuses(transpose1d_model(x, {4, 3, 3}, {{"strides", {2}}}, 1), in,
                        {{"ConvTranspose", 1}, {"Reshape", 2}}, "stride 2");
  testing::expect_fuses(
      transpose1d_model(x, {4, 2, 4}, {{"strides", {3}}, {"pads", {1, 2}}, {"output_padding", {1}}, {"dilations", {2}}}, 2),
      in, {{"ConvTranspose", 1}, {"Reshape", 2}}, "group 2, pads, output_padding, dilations");
  testing::expect_fuses(transpose1d_model(x, {4, 3, 3}, {{"strides", {2}}, {"output_shape", {20}}}, 1), in,
                        {{"ConvTranspose", 1}, {"Reshape", 2}}, "output_shape");
  testing::expect_fuses(transpose1d_model(x, {4, 3, 3}, {{"strides", {2}}}, 1, "SAME_UPPER"), in,
                        {{"ConvTranspose", 1}, {"Reshape", 2}}, "SAME_UPPER");
}

TEST(Conv1dAsConv2dTest, OtherConvolutionsStay) {
  // 2-D convolutions, and a 1-D one whose weight is not a constant.
  testing::ModelBuilder m(17);
  m.input("x", P::FLOAT, {1, 3, 9});
  m.input("w", P::FLOAT, {4, 3, 3});
  m.node("Conv", {"x", "w"}, {"y"});
  m.output("y", P::FLOAT, {});
  testing::expect_no_fusion(m.bytes(), {{"x", float_tensor({1, 3, 9}, wave(27))}, {"w", float_tensor({4, 3, 3}, wave(36))}},
                            "Conv", "weight is an input");
}

}  // namespace
}  // namespace loom
