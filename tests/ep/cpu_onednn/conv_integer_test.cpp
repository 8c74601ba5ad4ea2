// Convolutions as ONNX Runtime's quantize_dynamic writes them, on cpu_onednn
// vs the reference EP:
//   (xq, xs, xz) = DynamicQuantizeLinear(x)
//   y = Cast<float>(ConvInteger(xq, w_int8, xz, 0)) * (xs * w_scale) + bias
// ConvInteger's int32 result is exact, so outputs agree within float
// rounding; uint8 weights (quantize_dynamic's QUInt8, with a nonzero zero
// point oneDNN 2.6 cannot take) stay on the reference EP, saying why.
#include "ep_compare.h"

namespace loom::ep_testing {
namespace {

struct ConvIntegerCase {
  std::string what;
  std::vector<int64_t> x;  // N, C, H, W
  int64_t out_channels = 8, kernel = 3, stride = 1, pad = 1, group = 1;
  bool relu = true;
};

std::vector<int32_t> int8_weights(size_t count, uint32_t seed) {
  std::vector<int32_t> w(count);
  uint32_t s = seed * 2654435761u + 7u;
  for (int32_t& v : w) {
    s = s * 1664525u + 1013904223u;
    v = static_cast<int32_t>((s >> 8) % 255) - 127;  // [-127, 127], symmetric as quantize_dynamic writes
  }
  return w;
}

// Appends `x` -> DynamicQuantizeLinear -> ConvInteger -> Cast -> Mul(scales)
// -> Add(bias) [-> Relu] -> `y`, names prefixed with `p`.
void add_dynamic_conv(testing::ModelBuilder& m, const ConvIntegerCase& c, int64_t in_channels, const std::string& x,
                      const std::string& y, const std::string& p, uint32_t seed,
                      int32_t weight_type = ::onnx::TensorProto::INT8) {
  const int64_t in_per_group = in_channels / c.group;
  const std::vector<int64_t> w_dims = {c.out_channels, in_per_group, c.kernel, c.kernel};
  const size_t w_count = static_cast<size_t>(c.out_channels * in_per_group * c.kernel * c.kernel);
  std::vector<int32_t> w = int8_weights(w_count, seed);
  if (weight_type == ::onnx::TensorProto::UINT8)
    for (int32_t& v : w) v += 128;
  m.int_initializer(p + "w", weight_type, w_dims, w);
  m.int_initializer(p + "w_zero", weight_type, {}, {weight_type == ::onnx::TensorProto::UINT8 ? 128 : 0});
  m.float_initializer(p + "w_scale", {}, {0.0123f});
  m.float_initializer(p + "bias", {1, c.out_channels, 1, 1}, random_values(static_cast<size_t>(c.out_channels), seed + 1));
  m.node("DynamicQuantizeLinear", {x}, {p + "xq", p + "xs", p + "xz"});
  auto& conv = m.node("ConvInteger", {p + "xq", p + "w", p + "xz", p + "w_zero"}, {p + "acc"});
  add_ints_attr(conv, "kernel_shape", {c.kernel, c.kernel});
  add_ints_attr(conv, "strides", {c.stride, c.stride});
  add_ints_attr(conv, "pads", {c.pad, c.pad, c.pad, c.pad});
  if (c.group != 1) testing::add_int_attr(conv, "group", c.group);
  testing::add_int_attr(m.node("Cast", {p + "acc"}, {p + "acc_f"}), "to", ::onnx::TensorProto::FLOAT);
  m.node("Mul", {p + "xs", p + "w_scale"}, {p + "scale"});
  m.node("Mul", {p + "acc_f", p + "scale"}, {p + "scaled"});
  m.node("Add", {p + "scaled", p + "bias"}, {c.relu ? p + "biased" : y});
  if (c.relu) m.node("Relu", {p + "biased"}, {y});
}

std::string quantize_dynamic_conv(const ConvIntegerCase& c, int32_t weight_type = ::onnx::TensorProto::INT8) {
  testing::ModelBuilder m(13);
  m.input("x", kFloat, c.x);
  add_dynamic_conv(m, c, c.x[1], "x", "y", "", 3, weight_type);
  m.output("y", kFloat, {});
  return m.bytes();
}

TEST(OnednnConvInteger, QuantizeDynamicConvolutionsMatchTheReference) {
  const std::vector<ConvIntegerCase> cases = {
      {"3x3, pads 1", {1, 8, 10, 12}},
      {"3x3, stride 2, batch 2", {2, 16, 9, 11}, 24, 3, 2, 1},
      {"1x1", {1, 32, 7, 7}, 16, 1, 1, 0},
      {"grouped 3x3 (4 groups)", {1, 16, 8, 8}, 16, 3, 1, 1, 4},
      {"5x5 without padding, no Relu", {1, 4, 12, 12}, 8, 5, 1, 0, 1, false},
  };
  for (const ConvIntegerCase& c : cases) {
    ProfiledParts parts;
    // x spans negative and positive values: the zero point is inside (0, 255).
    expect_matches_reference(quantize_dynamic_conv(c), {{"x", random_tensor(c.x, 17, -2.f, 3.f)}}, {1e-5, 1e-5},
                             c.what, onednn_env(), &parts);
    EXPECT_EQ(parts.count("convolution int8"), 1u) << c.what;
  }
}

// ResNet blocks with projection shortcuts: each convolution's input is
// quantized from a float result of the block before. (A Cast reading a
// ConvInteger must wait for it to be built, whatever order the partition's
// units come in.)
TEST(OnednnConvInteger, ResidualBlocksMatchTheReference) {
  testing::ModelBuilder m(13);
  m.input("x", kFloat, {1, 16, 10, 10});
  const ConvIntegerCase c{"block", {1, 16, 10, 10}, 16};
  ConvIntegerCase second = c;
  second.relu = false;
  ConvIntegerCase shortcut{"shortcut", {1, 16, 10, 10}, 16, 1, 1, 0, 1, false};
  std::string in = "x";
  for (const std::string block : {"a", "b", "c"}) {
    // As torch exports a ResNet block with a projection: the main branch's
    // nodes, then the shortcut's, then their sum.
    add_dynamic_conv(m, c, 16, in, block + "_h", block + "1_", 3);
    add_dynamic_conv(m, second, 16, block + "_h", block + "_g", block + "2_", 7);
    add_dynamic_conv(m, shortcut, 16, in, block + "_p", block + "3_", 11);
    m.node("Add", {block + "_g", block + "_p"}, {block + "_s"});
    m.node("Relu", {block + "_s"}, {block + "_y"});
    in = block + "_y";
  }
  m.output(in, kFloat, {});
  ProfiledParts parts;
  expect_matches_reference(m.bytes(), {{"x", random_tensor({1, 16, 10, 10}, 31, -1.f, 1.f)}}, {1e-4, 1e-5}, "blocks",
                           onednn_env(), &parts);
  EXPECT_EQ(parts.count("convolution int8"), 9u);
}

TEST(OnednnConvInteger, NonNegativeInputsPutTheZeroPointAtZero) {
  // All x >= 0: DynamicQuantizeLinear's zero point is 0 and padding reads 0.
  const ConvIntegerCase c{"non-negative x", {1, 8, 6, 6}};
  expect_matches_reference(quantize_dynamic_conv(c), {{"x", random_tensor(c.x, 23, 0.f, 4.f)}}, {1e-5, 1e-5}, c.what);
}

TEST(OnednnConvInteger, Uint8WeightsStayOnTheReferenceSayingWhy) {
  const ConvIntegerCase c{"uint8 weights", {1, 8, 6, 6}};
  const std::string model = quantize_dynamic_conv(c, ::onnx::TensorProto::UINT8);
  auto s = make_session(environment({"cpu_onednn", "reference"}, FallbackPolicy::kAllow), model);
  auto reference = make_session(reference_env(), model);
  ASSERT_TRUE(s && reference);
  for (const auto& n : s->placement().nodes)
    if (n.op_type == "ConvInteger") {
      EXPECT_EQ(n.provider, "reference");
      EXPECT_NE(n.reason.find("uint8 weights"), std::string::npos) << n.reason;
    }
  const std::map<std::string, Tensor> in = {{"x", random_tensor(c.x, 29, -1.f, 1.f)}};
  auto got = s->run(in);
  auto want = reference->run(in);
  ASSERT_TRUE(got.has_value()) << got.status().message();
  ASSERT_TRUE(want.has_value()) << want.status().message();
  expect_close((*want)[0], (*got)[0], {1e-5, 1e-5}, c.what);
}

TEST(OnednnCast, IntegersToFloatAreExact) {
  for (const auto& [type, what] : std::vector<std::pair<int32_t, std::string>>{
           {::onnx::TensorProto::INT32, "int32"}, {::onnx::TensorProto::UINT8, "uint8"}, {::onnx::TensorProto::INT8, "int8"}}) {
    testing::ModelBuilder m(13);
    m.input("x", type, {2, 3, 4});
    testing::add_int_attr(m.node("Cast", {"x"}, {"f"}), "to", ::onnx::TensorProto::FLOAT);
    m.node("Relu", {"f"}, {"y"});
    m.output("y", kFloat, {});
    std::vector<int32_t> values(24);
    for (size_t i = 0; i < values.size(); ++i)
      values[i] = type == ::onnx::TensorProto::INT32 ? static_cast<int32_t>(i * 100003) - 1200000
                  : type == ::onnx::TensorProto::UINT8 ? static_cast<int32_t>(i * 11 % 256)
                                                       : static_cast<int32_t>(i * 11 % 256) - 128;
    Tensor x = Tensor::zeros(static_cast<DType>(type), Dims{2, 3, 4}).value();
    for (size_t i = 0; i < values.size(); ++i) {
      if (type == ::onnx::TensorProto::INT32) x.mutable_data_as<int32_t>()[i] = values[i];
      else if (type == ::onnx::TensorProto::UINT8) x.mutable_data_as<uint8_t>()[i] = static_cast<uint8_t>(values[i]);
      else x.mutable_data_as<int8_t>()[i] = static_cast<int8_t>(values[i]);
    }
    expect_matches_reference(m.bytes(), {{"x", x}}, {0, 0}, what);
  }
}

TEST(OnednnCast, ScalarsToFloat) {
  for (const int32_t type : {::onnx::TensorProto::INT32, ::onnx::TensorProto::UINT8, ::onnx::TensorProto::INT8}) {
    testing::ModelBuilder m(13);
    m.input("x", type, {});
    testing::add_int_attr(m.node("Cast", {"x"}, {"y"}), "to", ::onnx::TensorProto::FLOAT);
    m.output("y", kFloat, {});
    Tensor x = Tensor::zeros(static_cast<DType>(type), Dims{}).value();
    if (type == ::onnx::TensorProto::INT32) *x.mutable_data_as<int32_t>() = -70000;
    else if (type == ::onnx::TensorProto::UINT8) *x.mutable_data_as<uint8_t>() = 201;
    else *x.mutable_data_as<int8_t>() = -100;
    expect_matches_reference(m.bytes(), {{"x", x}}, {0, 0}, "scalar of type " + std::to_string(type));
  }
}

}  // namespace
}  // namespace loom::ep_testing
