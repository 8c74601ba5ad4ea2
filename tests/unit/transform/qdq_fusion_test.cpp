// QDQ-model passes: quantized_activation_removal (a Relu / Clip before a
// QuantizeLinear that clamps the same way goes; exact) and qdq_fusion
// (DQ -> Conv / MatMul -> Q into QLinearConv / QLinearMatMul; within one
// quantization step of the unfused graph, the reference EP at level
// disabled). Near misses keep their ops.
#include <gtest/gtest.h>

#include <cmath>

#include "common/model_builder.h"
#include "unit/transform/fusion_checks.h"

namespace loom {
namespace {

constexpr auto kFloat = ::onnx::TensorProto::FLOAT;
constexpr auto kU8 = ::onnx::TensorProto::UINT8;
constexpr auto kS8 = ::onnx::TensorProto::INT8;
constexpr auto kS32 = ::onnx::TensorProto::INT32;
using testing::float_tensor;
using testing::wave;

TEST(QdqFusion, PassesAreListed) {
  testing::expect_listed_pass("quantized_activation_removal", OptimizationLevel::kBasic);
  testing::expect_listed_pass("qdq_fusion", OptimizationLevel::kExtended);
}

// Symmetric int8 values of `w` (per output channel along axis 0 when
// `channels` > 1) and their scales.
void quantize_weights(const std::vector<float>& w, int64_t channels, std::vector<int32_t>* q,
                      std::vector<float>* scales) {
  const size_t per = w.size() / static_cast<size_t>(channels);
  for (int64_t c = 0; c < channels; ++c) {
    float m = 0.f;
    for (size_t i = 0; i < per; ++i) m = std::max(m, std::fabs(w[static_cast<size_t>(c) * per + i]));
    scales->push_back(m / 127.f);
  }
  for (size_t i = 0; i < w.size(); ++i) q->push_back(static_cast<int32_t>(std::nearbyint(w[i] / (*scales)[i / per])));
}

struct ConvCase {
  bool per_channel = true;
  bool int8_activations = false;
  bool bias = true;
  bool relu = true;             // Conv -> Relu -> Q (the Relu goes first)
  bool relu6 = false;           // Conv -> Clip(0, 6) -> Q, bounds from Constant nodes as torch exports them
  bool bad_bias_scale = false;  // bias scale != x_scale * w_scale: no fusion
  bool second_reader = false;   // the Conv output is also read by a Neg: no fusion
  bool weights_input = false;   // the int8 weights are a graph input: no fusion
  int64_t group = 1;
};

constexpr int64_t kInC = 4, kOutC = 6, kSide = 7;

// x (float) -> Q -> DQ -> Conv(DQ(w), DQ(b)) [-> Relu] -> Q -> y (quantized).
std::string conv_model(const ConvCase& c) {
  testing::ModelBuilder m(13);
  m.input("x", kFloat, {1, kInC, kSide, kSide});
  const auto act = c.int8_activations ? kS8 : kU8;
  const float x_scale = 2.f / 255.f, y_scale = c.relu && !c.relu6 ? 3.f / 255.f : 6.f / 255.f;
  const int32_t x_zero = c.int8_activations ? 0 : 128;
  const int32_t y_zero = c.relu ? (c.int8_activations ? -128 : 0) : (c.int8_activations ? 0 : 128);
  m.float_initializer("x_scale", {}, {x_scale}).int_initializer("x_zero", act, {}, {x_zero});
  m.float_initializer("y_scale", {}, {y_scale}).int_initializer("y_zero", act, {}, {y_zero});
  m.node("QuantizeLinear", {"x", "x_scale", "x_zero"}, {"xq"});
  m.node("DequantizeLinear", {"xq", "x_scale", "x_zero"}, {"xd"});
  const int64_t in_per_group = kInC / c.group;
  const std::vector<float> w = wave(static_cast<size_t>(kOutC * in_per_group * 9), 0.4f, 0.3f);
  std::vector<int32_t> wq;
  std::vector<float> ws;
  quantize_weights(w, c.per_channel ? kOutC : 1, &wq, &ws);
  const std::vector<int64_t> scale_dims = c.per_channel ? std::vector<int64_t>{kOutC} : std::vector<int64_t>{};
  if (c.weights_input) m.input("wq", kS8, {kOutC, in_per_group, 3, 3});
  else m.int_initializer("wq", kS8, {kOutC, in_per_group, 3, 3}, wq);
  m.float_initializer("w_scale", scale_dims, ws)
      .int_initializer("w_zero", kS8, scale_dims, std::vector<int32_t>(ws.size(), 0));
  auto& wdq = m.node("DequantizeLinear", {"wq", "w_scale", "w_zero"}, {"wd"});
  if (c.per_channel) testing::add_int_attr(wdq, "axis", 0);
  std::vector<std::string> conv_inputs = {"xd", "wd"};
  if (c.bias) {
    std::vector<float> bs;
    std::vector<int32_t> bq;
    const std::vector<float> b = wave(kOutC, 0.3f, 2.f);
    for (int64_t o = 0; o < kOutC; ++o) {
      bs.push_back(x_scale * ws[c.per_channel ? static_cast<size_t>(o) : 0] * (c.bad_bias_scale ? 1.5f : 1.f));
      bq.push_back(static_cast<int32_t>(std::nearbyint(b[static_cast<size_t>(o)] / bs.back())));
    }
    if (!c.per_channel) bs.resize(1);
    m.int_initializer("bq", kS32, {kOutC}, bq)
        .float_initializer("b_scale", scale_dims, bs)
        .int_initializer("b_zero", kS32, scale_dims, std::vector<int32_t>(bs.size(), 0));
    auto& bdq = m.node("DequantizeLinear", {"bq", "b_scale", "b_zero"}, {"bd"});
    if (c.per_channel) testing::add_int_attr(bdq, "axis", 0);
    conv_inputs.push_back("bd");
  }
  auto& conv = m.node("Conv", std::vector<std::string>(conv_inputs), std::vector<std::string>{"c"});
  testing::add_ints_attr(conv, "pads", {1, 1, 1, 1});
  testing::add_ints_attr(conv, "strides", {1, 2});
  if (c.group > 1) testing::add_int_attr(conv, "group", c.group);
  std::string out = "c";
  if (c.relu6) {
    for (auto [name, v] : {std::pair{"six_lo", 0.f}, std::pair{"six_hi", 6.f}}) {
      auto* a = m.node("Constant", {}, {name}).add_attribute();
      a->set_name("value");
      a->set_type(::onnx::AttributeProto::TENSOR);
      a->mutable_t()->set_data_type(kFloat);
      a->mutable_t()->add_float_data(v);
    }
    m.node("Clip", {"c", "six_lo", "six_hi"}, {"r"});
    out = "r";
  } else if (c.relu) {
    m.node("Relu", {"c"}, {"r"});
    out = "r";
  }
  m.node("QuantizeLinear", {out, "y_scale", "y_zero"}, {"y"});
  m.output("y", act, {});
  if (c.second_reader) {
    m.node("Neg", {"c"}, {"n"});
    m.output("n", kFloat, {});
  }
  return m.bytes();
}

std::map<std::string, Tensor> conv_feeds(const ConvCase& c) {
  std::map<std::string, Tensor> in = {{"x", float_tensor({1, kInC, kSide, kSide}, wave(kInC * kSide * kSide, 1.f))}};
  if (c.weights_input) {
    std::vector<int8_t> w(static_cast<size_t>(kOutC * (kInC / c.group) * 9), 3);
    in["wq"] = Tensor::from_vector(DType::kInt8, {kOutC, kInC / c.group, 3, 3}, w);
  }
  return in;
}

// The fused session's quantized outputs are within one step of the unfused
// graph's, and equal for all but a few elements (ties the two roundings
// break differently).
void expect_within_one_step(const std::string& model, const std::map<std::string, Tensor>& feeds,
                            const std::string& what) {
  auto plain = testing::session(model, OptimizationLevel::kDisabled);
  auto fused = testing::session(model, OptimizationLevel::kExtended);
  ASSERT_TRUE(plain && fused) << what;
  auto want = plain->run(feeds);
  auto got = fused->run(feeds);
  ASSERT_TRUE(want.has_value() && got.has_value()) << what;
  const auto a = testing::as_doubles((*want)[0]), b = testing::as_doubles((*got)[0]);
  ASSERT_EQ(a.size(), b.size()) << what;
  ASSERT_EQ((*want)[0].dtype(), (*got)[0].dtype()) << what;
  size_t differ = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_LE(std::fabs(a[i] - b[i]), 1.0) << what << " at " << i;
    differ += a[i] != b[i];
  }
  EXPECT_LE(differ, a.size() / 20) << what << ": " << differ << " of " << a.size() << " elements differ";
  // Not all zero: the case exercises the arithmetic.
  size_t distinct = 0;
  for (size_t i = 1; i < a.size(); ++i) distinct += a[i] != a[0];
  EXPECT_GT(distinct, a.size() / 4) << what;
}

TEST(QdqFusion, ConvBetweenDqAndQBecomesQLinearConv) {
  for (bool per_channel : {true, false})
    for (bool int8 : {false, true})
      for (bool bias : {true, false})
        for (bool relu : {true, false}) {
          ConvCase c;
          c.per_channel = per_channel;
          c.int8_activations = int8;
          c.bias = bias;
          c.relu = relu;
          const std::string what = std::string(per_channel ? "per channel" : "per tensor") + (int8 ? ", int8" : ", uint8") +
                                   (bias ? ", bias" : "") + (relu ? ", relu" : "");
          const std::string model = conv_model(c);
          auto fused = testing::session(model, OptimizationLevel::kExtended);
          ASSERT_TRUE(fused) << what;
          EXPECT_EQ(testing::op_counts(*fused), (std::map<std::string, int>{{"QuantizeLinear", 1}, {"QLinearConv", 1}}))
              << what;
          expect_within_one_step(model, conv_feeds(c), what);
        }
}

// MobileNetV2's Conv -> ReLU6 -> Q: the Clip's bounds are Constant nodes
// until constant folding; the Clip must still go before Conv + Clip become
// a float FusedConv.
TEST(QdqFusion, ConvReLU6WithConstantNodeBoundsFuses) {
  ConvCase c;
  c.relu6 = true;
  const std::string model = conv_model(c);
  auto fused = testing::session(model, OptimizationLevel::kExtended);
  ASSERT_TRUE(fused);
  EXPECT_EQ(testing::op_counts(*fused), (std::map<std::string, int>{{"QuantizeLinear", 1}, {"QLinearConv", 1}}));
  expect_within_one_step(model, conv_feeds(c), "ReLU6");
}

TEST(QdqFusion, GroupedConvFuses) {
  ConvCase c;
  c.group = 2;
  auto fused = testing::session(conv_model(c), OptimizationLevel::kExtended);
  ASSERT_TRUE(fused);
  EXPECT_EQ(testing::op_counts(*fused)["QLinearConv"], 1);
  expect_within_one_step(conv_model(c), conv_feeds(c), "group 2");
}

TEST(QdqFusion, ConvNearMissesKeepTheirOps) {
  ConvCase bad_bias;
  bad_bias.bad_bias_scale = true;
  ConvCase shared;
  shared.second_reader = true;
  shared.relu = false;
  ConvCase runtime_weights;
  runtime_weights.weights_input = true;
  runtime_weights.bias = false;
  for (auto [c, what] : {std::pair{bad_bias, "bias scale is not x_scale * w_scale"},
                         std::pair{shared, "the Conv output has another reader"},
                         std::pair{runtime_weights, "weights are a graph input"}}) {
    auto fused = testing::session(conv_model(c), OptimizationLevel::kExtended);
    ASSERT_TRUE(fused) << what;
    EXPECT_EQ(testing::op_counts(*fused)["QLinearConv"], 0) << what;
    EXPECT_EQ(testing::op_counts(*fused)["Conv"], 1) << what;
    auto plain = testing::session(conv_model(c), OptimizationLevel::kDisabled);
    testing::expect_same_outputs(*plain, *fused, conv_feeds(c), what, 0);
  }
}

// a (float) -> Q -> DQ -> MatMul(DQ(b)) -> Q -> y.
std::string matmul_model(bool per_column, const std::vector<int64_t>& a_dims, int64_t k, int64_t n,
                         const std::vector<int64_t>& b_dims) {
  testing::ModelBuilder m(13);
  m.input("a", kFloat, a_dims);
  m.float_initializer("a_scale", {}, {2.f / 255.f}).int_initializer("a_zero", kU8, {}, {128});
  m.float_initializer("y_scale", {}, {4.f / 255.f}).int_initializer("y_zero", kU8, {}, {120});
  m.node("QuantizeLinear", {"a", "a_scale", "a_zero"}, {"aq"});
  m.node("DequantizeLinear", {"aq", "a_scale", "a_zero"}, {"ad"});
  int64_t b_count = 1;
  for (int64_t d : b_dims) b_count *= d;
  const std::vector<float> b = wave(static_cast<size_t>(b_count), 0.5f, 0.7f);
  std::vector<int32_t> bq;
  std::vector<float> bs;
  if (per_column) {  // scale per column (last axis)
    for (int64_t col = 0; col < n; ++col) {
      float mx = 0.f;
      for (int64_t row = 0; row < k; ++row) mx = std::max(mx, std::fabs(b[static_cast<size_t>(row * n + col)]));
      bs.push_back(mx / 127.f);
    }
    for (size_t i = 0; i < b.size(); ++i)
      bq.push_back(static_cast<int32_t>(std::nearbyint(b[i] / bs[i % static_cast<size_t>(n)])));
  } else {
    quantize_weights(b, 1, &bq, &bs);
  }
  const std::vector<int64_t> scale_dims = per_column ? std::vector<int64_t>{n} : std::vector<int64_t>{};
  m.int_initializer("bq", kS8, b_dims, bq)
      .float_initializer("b_scale", scale_dims, bs)
      .int_initializer("b_zero", kS8, scale_dims, std::vector<int32_t>(bs.size(), 0));
  auto& bdq = m.node("DequantizeLinear", {"bq", "b_scale", "b_zero"}, {"bd"});
  if (per_column) testing::add_int_attr(bdq, "axis", static_cast<int64_t>(b_dims.size()) - 1);
  m.node("MatMul", {"ad", "bd"}, {"c"});
  m.node("QuantizeLinear", {"c", "y_scale", "y_zero"}, {"y"});
  m.output("y", kU8, {});
  return m.bytes();
}

TEST(QdqFusion, MatMulBetweenDqAndQBecomesQLinearMatMul) {
  struct Case {
    bool per_column;
    std::vector<int64_t> a_dims, b_dims;
  };
  for (const Case& c : {Case{true, {5, 8}, {8, 6}}, Case{false, {2, 5, 8}, {8, 6}}, Case{true, {3, 4, 8}, {8, 6}}}) {
    const std::string model = matmul_model(c.per_column, c.a_dims, 8, 6, c.b_dims);
    const std::string what = std::string(c.per_column ? "per column" : "per tensor") + ", a rank " +
                             std::to_string(c.a_dims.size());
    auto fused = testing::session(model, OptimizationLevel::kExtended);
    ASSERT_TRUE(fused) << what;
    EXPECT_EQ(testing::op_counts(*fused), (std::map<std::string, int>{{"QuantizeLinear", 1}, {"QLinearMatMul", 1}}))
        << what;
    int64_t count = 1;
    for (int64_t d : c.a_dims) count *= d;
    expect_within_one_step(model, {{"a", float_tensor(Dims(c.a_dims), wave(static_cast<size_t>(count), 1.f))}},
                           what);
  }
}

TEST(QdqFusion, PerAxisMatMulOverABatchedBStaysUnfused) {
  // QLinearMatMul's per-column scales are for a 2-D b only.
  const std::string model = matmul_model(true, {2, 5, 8}, 8, 6, {2, 8, 6});
  auto fused = testing::session(model, OptimizationLevel::kExtended);
  ASSERT_TRUE(fused);
  EXPECT_EQ(testing::op_counts(*fused)["QLinearMatMul"], 0);
  EXPECT_EQ(testing::op_counts(*fused)["MatMul"], 1);
}

// x -> Relu / Clip -> Q(scale, zero) -> y: the activation goes exactly when
// the Q clamps the same way.
// Clip's bounds as initializers, or (`constant_nodes`) as Constant nodes, as
// torch exports ReLU6: the pass runs before constant folding makes them
// initializers.
std::string activation_model(const std::string& act, float lo, float hi, float scale, int32_t zero, bool int8,
                             bool constant_nodes = false) {
  testing::ModelBuilder m(13);
  m.input("x", kFloat, {4, 16});
  m.float_initializer("s", {}, {scale}).int_initializer("z", int8 ? kS8 : kU8, {}, {zero});
  if (act == "Clip") {
    if (constant_nodes) {
      for (auto [name, v] : {std::pair{"lo", lo}, std::pair{"hi", hi}}) {
        auto& c = m.node("Constant", {}, {name});
        auto* a = c.add_attribute();
        a->set_name("value");
        a->set_type(::onnx::AttributeProto::TENSOR);
        a->mutable_t()->set_data_type(kFloat);
        a->mutable_t()->add_float_data(v);
      }
    } else {
      m.float_initializer("lo", {}, {lo}).float_initializer("hi", {}, {hi});
    }
    m.node("Clip", {"x", "lo", "hi"}, {"a"});
  } else {
    m.node(act, {"x"}, {"a"});
  }
  m.node("QuantizeLinear", {"a", "s", "z"}, {"y"});
  m.output("y", int8 ? kS8 : kU8, {});
  return m.bytes();
}

TEST(QdqFusion, ActivationsTheQuantizeLinearImpliesAreRemoved) {
  const std::map<std::string, Tensor> feeds = {{"x", float_tensor({4, 16}, wave(64, 9.f))}};
  struct Case {
    std::string act;
    float lo, hi, scale;
    int32_t zero;
    bool int8, removed;
    const char* what;
    bool constant_nodes = false;
  };
  for (const Case& c : {
           Case{"Relu", 0, 0, 0.05f, 0, false, true, "Relu, uint8 zero point 0"},
           Case{"Relu", 0, 0, 0.05f, -128, true, true, "Relu, int8 zero point -128"},
           Case{"Relu", 0, 0, 0.05f, 10, false, false, "Relu, zero point 10 keeps negatives apart"},
           Case{"Clip", 0.f, 6.f, 6.f / 255.f, 0, false, true, "ReLU6 with the Q spanning [0, 6]"},
           Case{"Clip", 0.f, 6.f, 3.f / 255.f, 0, false, true, "ReLU6 with the Q saturating at 3"},
           Case{"Clip", 0.f, 2.f, 6.f / 255.f, 0, false, false, "Clip at 2 inside the Q's range"},
           Case{"Clip", -1.f, 6.f, 6.f / 255.f, 0, false, true, "Clip's low bound below what the Q reaches"},
           Case{"Clip", 1.f, 6.f, 6.f / 255.f, 0, false, false, "Clip's low bound above zero"},
           Case{"Clip", 0.f, 6.f, 6.f / 255.f, 0, false, true, "ReLU6 with Constant-node bounds", true},
           Case{"Clip", 0.f, 2.f, 6.f / 255.f, 0, false, false, "Constant-node Clip at 2", true},
       }) {
    const std::string model = activation_model(c.act, c.lo, c.hi, c.scale, c.zero, c.int8, c.constant_nodes);
    auto plain = testing::session(model, OptimizationLevel::kDisabled);
    auto basic = testing::session(model, OptimizationLevel::kBasic);
    ASSERT_TRUE(plain && basic) << c.what;
    EXPECT_EQ(testing::op_counts(*basic)[c.act], c.removed ? 0 : 1) << c.what;
    testing::expect_same_outputs(*plain, *basic, feeds, c.what, 0);
  }
}

}  // namespace
}  // namespace loom
