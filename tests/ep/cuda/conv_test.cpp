// The CUDA EP's convolutions against the reference EP: Conv in 1-D, 2-D
// and 3-D with groups (depthwise too), dilations, strides, symmetric and
// asymmetric pads, every auto_pad, with and without bias, opsets 1, 10 and
// 17, float and float16, an empty batch; com.microsoft FusedConv with each
// activation, with and without Z and bias, float and float16 (cuDNN's
// fused call in PSEUDO_HALF_CONFIG for ReLU and identity); ConvTranspose with strides, output_padding, groups,
// asymmetric pads, output_shape, every auto_pad, dilations, 1-D and 3-D.
// float32 is compared at rtol 1e-4 / atol 1e-5 (cuDNN runs FMA math: no
// TF32), float16 at 1e-2.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cuda_compare.h"

namespace loom {
namespace {

using cuda_testing::expect_matches_reference;
using cuda_testing::random_tensor;
using cuda_testing::Tolerance;
using testing::add_float_attr;
using testing::add_floats_attr;
using testing::add_int_attr;
using testing::add_ints_attr;
using testing::add_string_attr;
using testing::ModelBuilder;
using Dims = std::vector<int64_t>;
using Attrs = std::function<void(::onnx::NodeProto&)>;

constexpr int32_t kF32 = ::onnx::TensorProto::FLOAT;
constexpr int32_t kF16 = ::onnx::TensorProto::FLOAT16;
constexpr Tolerance kConvFloatTol{1e-4, 1e-5};
constexpr Tolerance kConvHalfTol{1e-2, 1e-2};

std::string type_name(int32_t t) { return t == kF16 ? "float16" : "float"; }

struct Operand {
  std::string name;
  Dims dims;
};

// One `op` node over `inputs` (all of `type`; an empty name leaves an
// optional input out) into y of rank `out_rank` (dims left symbolic).
std::string one_node(int64_t opset, const std::string& op, const std::string& domain, int32_t type,
                     const std::vector<Operand>& inputs, size_t out_rank, const Attrs& attrs) {
  ModelBuilder m(opset);
  if (!domain.empty()) m.import_domain(domain, 1);
  std::vector<std::string> names;
  for (const Operand& in : inputs) {
    names.push_back(in.name);
    if (!in.name.empty()) m.input(in.name, type, in.dims);
  }
  ::onnx::NodeProto& n = m.node(op, names, {"y"}, op, domain);
  if (attrs) attrs(n);
  m.output("y", type, Dims(out_rank, -1));
  return m.bytes();
}

std::map<std::string, Tensor> random_inputs(int32_t type, const std::vector<Operand>& inputs) {
  std::map<std::string, Tensor> out;
  uint32_t seed = 7;
  for (const Operand& in : inputs)
    if (!in.name.empty())
      out.emplace(in.name, random_tensor(type == kF16 ? DType::kFloat16 : DType::kFloat, in.dims, seed++));
  return out;
}

void check(const std::string& op, const std::string& domain, int32_t type, const std::vector<Operand>& inputs,
           const Attrs& attrs, const std::string& what, int64_t opset = 17,
           const std::shared_ptr<Environment>& gpu = cuda_testing::cuda_env()) {
  cuda_testing::expect_matches_reference_in(
      gpu, cuda_testing::reference_env(), one_node(opset, op, domain, type, inputs, inputs[0].dims.size(), attrs),
      random_inputs(type, inputs), type == kF16 ? kConvHalfTol : kConvFloatTol, op + " " + type_name(type) + " " + what);
}

// Conv of X [x] and W [w], with B [w[0]] when `bias`.
void check_conv(int32_t type, const Dims& x, const Dims& w, bool bias, const Attrs& attrs, const std::string& what,
                int64_t opset = 17, const std::shared_ptr<Environment>& gpu = cuda_testing::cuda_env()) {
  std::vector<Operand> in = {{"x", x}, {"w", w}};
  if (bias) in.push_back({"b", {w[0]}});
  check("Conv", "", type, in, attrs, what, opset, gpu);
}

// A cuda environment with `options` for the cuda provider.
std::shared_ptr<Environment> cuda_env_with(const std::map<std::string, std::string>& options) {
  Config c;
  c.providers = {"cuda"};
  c.fallback = FallbackPolicy::kDeny;
  c.optimization_level = OptimizationLevel::kDisabled;
  c.provider_options = {{"cuda", options}};
  return testing::make_env(c);
}

Attrs ints(std::vector<std::pair<std::string, Dims>> values, std::string auto_pad = "", int64_t group = 1) {
  return [=](::onnx::NodeProto& n) {
    for (const auto& [name, v] : values) add_ints_attr(n, name, v);
    if (!auto_pad.empty()) add_string_attr(n, "auto_pad", auto_pad);
    if (group != 1) add_int_attr(n, "group", group);
  };
}

TEST(CudaConv, TwoDimensional) {
  LOOM_SKIP_WITHOUT_GPU();
  for (int32_t t : {kF32, kF16}) {
    check_conv(t, {2, 3, 37, 29}, {5, 3, 3, 3}, true, ints({{"pads", {1, 1, 1, 1}}}), "3x3 pads 1 bias");
    check_conv(t, {2, 3, 31, 33}, {8, 3, 3, 3}, false, ints({{"strides", {2, 2}}}), "stride 2 no pads");
    check_conv(t, {1, 3, 23, 21}, {4, 3, 3, 3}, true, ints({{"dilations", {2, 2}}, {"pads", {2, 2, 2, 2}}}),
               "dilation 2");
    check_conv(t, {1, 3, 19, 17}, {4, 3, 3, 2}, true, ints({{"pads", {0, 1, 2, 0}}}), "asymmetric pads");
    check_conv(t, {1, 3, 19, 17}, {4, 3, 3, 3}, false, ints({{"pads", {3, 0, 3, 1}}, {"strides", {2, 1}}}),
               "pads as large as the kernel");
    check_conv(t, {1, 5, 13, 11}, {7, 5, 1, 1}, true, ints({}), "pointwise");
    check_conv(t, {1, 3, 13, 11}, {7, 3, 3, 3}, false, ints({{"kernel_shape", {3, 3}}}), "kernel_shape given");
    check_conv(t, {0, 3, 9, 9}, {4, 3, 3, 3}, true, ints({}), "empty batch");
  }
}

TEST(CudaConv, GroupsAndDepthwise) {
  LOOM_SKIP_WITHOUT_GPU();
  for (int32_t t : {kF32, kF16}) {
    check_conv(t, {2, 4, 17, 19}, {6, 2, 3, 3}, false, ints({{"pads", {1, 1, 1, 1}}}, "", 2), "group 2");
    check_conv(t, {1, 8, 33, 35}, {8, 1, 3, 3}, true, ints({{"pads", {1, 1, 1, 1}}, {"strides", {2, 2}}}, "", 8),
               "depthwise stride 2");
    check_conv(t, {1, 6, 15, 14}, {12, 1, 5, 5}, true, ints({{"pads", {2, 1, 2, 2}}}, "", 6),
               "depthwise multiplier 2, asymmetric pads");
    check_conv(t, {1, 6, 16, 15}, {6, 1, 3, 3}, false, ints({{"strides", {2, 2}}}, "SAME_UPPER", 6),
               "depthwise SAME_UPPER");
  }
}

TEST(CudaConv, AutoPad) {
  LOOM_SKIP_WITHOUT_GPU();
  for (int32_t t : {kF32, kF16}) {
    check_conv(t, {1, 3, 16, 15}, {4, 3, 3, 3}, true, ints({{"strides", {2, 2}}}, "SAME_UPPER"), "SAME_UPPER stride 2");
    check_conv(t, {1, 3, 16, 15}, {4, 3, 2, 2}, true, ints({}, "SAME_UPPER"), "SAME_UPPER even kernel");
    check_conv(t, {1, 3, 16, 15}, {4, 3, 2, 2}, true, ints({}, "SAME_LOWER"), "SAME_LOWER even kernel");
    check_conv(t, {1, 3, 17, 15}, {4, 3, 3, 3}, false, ints({{"strides", {2, 2}}}, "SAME_LOWER"),
               "SAME_LOWER stride 2");
    check_conv(t, {1, 3, 17, 15}, {4, 3, 3, 3}, false, ints({{"strides", {2, 3}}}, "VALID"), "VALID");
    check_conv(t, {1, 3, 17, 15}, {4, 3, 3, 3}, true, ints({}, "NOTSET"), "NOTSET");
  }
}

TEST(CudaConv, OneAndThreeDimensional) {
  LOOM_SKIP_WITHOUT_GPU();
  for (int32_t t : {kF32, kF16}) {
    check_conv(t, {2, 4, 129}, {6, 4, 5}, true, ints({{"strides", {2}}, {"pads", {2, 1}}}), "1-D asymmetric pads");
    check_conv(t, {3, 4, 37}, {4, 2, 3}, false, ints({{"dilations", {3}}}, "SAME_UPPER", 2), "1-D group dilation");
    check_conv(t, {1, 2, 9, 11, 13}, {4, 2, 3, 3, 3}, true, ints({{"pads", {1, 0, 1, 1, 0, 1}}}), "3-D pads");
    check_conv(t, {1, 4, 7, 9, 8}, {4, 2, 3, 2, 3}, false,
               ints({{"strides", {2, 1, 2}}, {"dilations", {1, 2, 1}}, {"pads", {1, 1, 0, 0, 1, 2}}}, "", 2),
               "3-D group, stride, dilation, asymmetric pads");
  }
}

TEST(CudaConv, Opsets) {
  LOOM_SKIP_WITHOUT_GPU();
  check_conv(kF32, {1, 3, 11, 13}, {4, 3, 3, 3}, true, ints({{"pads", {1, 1, 1, 1}}}), "opset 1", 1);
  check_conv(kF32, {1, 3, 11, 13}, {4, 3, 3, 3}, true, ints({{"strides", {2, 2}}}, "SAME_UPPER"), "opset 10", 10);
  check_conv(kF16, {1, 3, 11, 13}, {4, 3, 3, 3}, false, ints({{"pads", {0, 1, 1, 0}}}), "opset 11", 11);
}

// com.microsoft FusedConv: Y = act(Conv + B + Z).
void check_fused(const std::string& activation, const std::vector<float>& params, bool bias, bool z,
                 const Dims& x = {2, 3, 19, 21}, const Dims& w = {5, 3, 3, 3}, int32_t type = kF32,
                 const std::shared_ptr<Environment>& gpu = cuda_testing::cuda_env()) {
  std::vector<Operand> in = {{"x", x}, {"w", w}, {bias ? "b" : "", {w[0]}}};
  const Dims y = {x[0], w[0], x[2], x[3]};  // pads 1: same size
  if (z) in.push_back({"z", y});
  const Attrs attrs = [&](::onnx::NodeProto& n) {
    add_ints_attr(n, "pads", {1, 1, 1, 1});
    if (!activation.empty()) add_string_attr(n, "activation", activation);
    if (!params.empty()) add_floats_attr(n, "activation_params", params);
  };
  cuda_testing::expect_matches_reference_in(
      gpu, cuda_testing::reference_env(), one_node(17, "FusedConv", "com.microsoft", type, in, 4, attrs),
      random_inputs(type, in), type == kF16 ? kConvHalfTol : kConvFloatTol,
      "FusedConv " + type_name(type) + " " + (activation.empty() ? "no activation" : activation) +
          (bias ? " bias" : "") + (z ? " Z" : ""));
}

TEST(CudaConv, FusedConvActivations) {
  LOOM_SKIP_WITHOUT_GPU();
  const std::vector<std::pair<std::string, std::vector<float>>> acts = {{"Relu", {}},
                                                                        {"Tanh", {}},
                                                                        {"Sigmoid", {}},
                                                                        {"Silu", {}},
                                                                        {"LeakyRelu", {0.1f}},
                                                                        {"Clip", {-0.5f, 0.5f}},
                                                                        {"HardSigmoid", {0.2f, 0.5f}},
                                                                        {"", {}}};
  for (const auto& [act, params] : acts) {
    check_fused(act, params, true, false);
    check_fused(act, params, true, true);
  }
  check_fused("Relu", {}, false, true);
  check_fused("Relu", {}, false, false);
  check_fused("LeakyRelu", {0.2f}, true, true, {1, 4, 17, 16}, {6, 4, 3, 3});
}

// float16 FusedConv, as precision fp16 makes it from ResNet's Conv + Relu
// (+ Add): cuDNN's fused call for ReLU and identity, the epilogue pass for
// the rest.
TEST(CudaConv, FusedConvFloat16) {
  LOOM_SKIP_WITHOUT_GPU();
  for (const std::string& act : {"Relu", "", "Sigmoid"}) {
    check_fused(act, {}, true, false, {2, 8, 19, 21}, {16, 8, 3, 3}, kF16);
    check_fused(act, {}, true, true, {2, 8, 19, 21}, {16, 8, 3, 3}, kF16);
  }
  check_fused("Relu", {}, false, true, {1, 8, 14, 14}, {8, 8, 3, 3}, kF16);
}

// cudnn_fused_conv=0: the plain convolution, then Loom's epilogue pass,
// for what cuDNN's fused call would have taken (bias, ReLU, Z).
TEST(CudaConv, FusedConvWithoutCudnnFusion) {
  LOOM_SKIP_WITHOUT_GPU();
  static auto unfused = cuda_env_with({{"cudnn_fused_conv", "0"}});
  for (const int32_t type : {kF32, kF16})
    for (const bool z : {false, true})
      for (const std::string act : {"Relu", ""})
        check_fused(act, {}, true, z, {2, 8, 19, 21}, {16, 8, 3, 3}, type, unfused);
}

// cudnn_conv_api=graph: 2-D convolutions through graph-API plans (bias, Z
// and ReLU / identity fused in; other activations after the plain plan),
// in float (FMA engines only, no TF32) and float16; 1-D and 3-D ones keep
// the legacy calls.
TEST(CudaConv, GraphApiMatchesTheReference) {
  LOOM_SKIP_WITHOUT_GPU();
  static auto graph = cuda_env_with({{"cudnn_conv_api", "graph"}});
  for (const int32_t t : {kF32, kF16}) {
    check_conv(t, {2, 3, 19, 21}, {5, 3, 3, 3}, true, ints({{"pads", {1, 1, 1, 1}}}), "graph 3x3 pads 1", 17, graph);
    check_conv(t, {1, 8, 17, 16}, {16, 8, 1, 1}, false, ints({{"strides", {2, 2}}}), "graph 1x1 stride 2", 17, graph);
    check_conv(t, {2, 16, 12, 10}, {16, 1, 3, 3}, true, ints({{"pads", {2, 2, 2, 2}}, {"dilations", {2, 2}}}, "", 16),
               "graph depthwise dilated", 17, graph);
    check_conv(t, {1, 8, 9, 9}, {12, 4, 3, 3}, true, ints({{"pads", {0, 1, 1, 0}}}, "", 2),
               "graph group 2 asymmetric pads", 17, graph);
    check_conv(t, {2, 4, 9, 7, 5}, {6, 4, 3, 3, 3}, true, ints({}), "graph 3-D (legacy)", 17, graph);
    for (const std::string act : {"Relu", "", "Sigmoid"})
      for (const bool z : {false, true}) check_fused(act, {}, true, z, {2, 8, 19, 21}, {16, 8, 3, 3}, t, graph);
    check_fused("Relu", {}, false, true, {1, 8, 14, 14}, {8, 8, 3, 3}, t, graph);
  }
}

// ConvTranspose of X [x] and W [w] (W: [C_in, C_out / group, k...]), with
// B [C_out] when `bias`.
void check_transpose(int32_t type, const Dims& x, const Dims& w, int64_t group, bool bias, const Attrs& attrs,
                     const std::string& what, int64_t opset = 17) {
  std::vector<Operand> in = {{"x", x}, {"w", w}};
  if (bias) in.push_back({"b", {w[1] * group}});
  check("ConvTranspose", "", type, in, attrs, what, opset);
}

TEST(CudaConv, ConvTranspose) {
  LOOM_SKIP_WITHOUT_GPU();
  for (int32_t t : {kF32, kF16}) {
    check_transpose(t, {1, 8, 15, 17}, {8, 4, 2, 2}, 1, true, ints({{"strides", {2, 2}}}), "2x2 stride 2 (PP-OCR)");
    check_transpose(t, {2, 4, 9, 11}, {4, 3, 3, 3}, 1, true,
                    ints({{"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}, {"output_padding", {1, 1}}}),
                    "stride 2 pads 1 output_padding 1");
    check_transpose(t, {1, 4, 7, 9}, {4, 3, 3, 3}, 2, true, ints({{"strides", {2, 2}}}, "", 2), "group 2");
    check_transpose(t, {1, 4, 7, 9}, {4, 1, 3, 3}, 4, false, ints({{"strides", {2, 1}}, {"pads", {1, 1, 1, 1}}}, "", 4),
                    "depthwise");
    check_transpose(t, {1, 3, 8, 7}, {3, 2, 3, 3}, 1, true, ints({{"strides", {2, 2}}, {"pads", {0, 1, 1, 0}}}),
                    "asymmetric pads");
    check_transpose(t, {1, 2, 9, 11}, {2, 3, 3, 3}, 1, false, ints({{"strides", {2, 2}}, {"output_shape", {19, 24}}}),
                    "output_shape");
    check_transpose(t, {1, 2, 9, 11}, {2, 3, 3, 3}, 1, true, ints({{"strides", {2, 2}}}, "SAME_UPPER"), "SAME_UPPER");
    check_transpose(t, {1, 2, 9, 11}, {2, 3, 3, 3}, 1, true, ints({{"strides", {2, 2}}}, "SAME_LOWER"), "SAME_LOWER");
    check_transpose(t, {1, 2, 9, 11}, {2, 3, 3, 3}, 1, false, ints({{"strides", {3, 2}}}, "VALID"), "VALID");
    check_transpose(t, {1, 3, 6, 7}, {3, 2, 3, 3}, 1, true,
                    ints({{"strides", {2, 2}}, {"dilations", {2, 2}}, {"output_padding", {1, 0}}}),
                    "dilation 2 output_padding");
    check_transpose(t, {1, 3, 6, 7}, {3, 2, 2, 2}, 1, false, ints({{"dilations", {3, 3}}, {"output_padding", {2, 1}}}),
                    "output_padding past the stride");
    check_transpose(t, {2, 3, 17}, {3, 5, 4}, 1, true, ints({{"strides", {3}}, {"dilations", {2}}, {"pads", {1, 2}}}),
                    "1-D");
    check_transpose(t, {1, 2, 5, 6, 7}, {2, 2, 3, 3, 3}, 1, true,
                    ints({{"strides", {2, 2, 2}}, {"pads", {1, 1, 1, 1, 1, 1}}}), "3-D");
    check_transpose(t, {0, 2, 5, 5}, {2, 2, 3, 3}, 1, true, ints({}), "empty batch");
  }
  check_transpose(kF32, {1, 3, 6, 7}, {3, 2, 3, 3}, 1, true, ints({{"strides", {2, 2}}}), "opset 10", 10);
  check_transpose(kF32, {1, 3, 6, 7}, {3, 2, 3, 3}, 1, true, ints({{"strides", {2, 2}}}), "opset 1", 1);
}

}  // namespace
}  // namespace loom
