// Reference EP com.microsoft contrib kernels (ONNX Runtime semantics) through
// the public API, with one-node models built in memory: Gelu, FastGelu, QuickGelu,
// BiasGelu, SkipLayerNormalization, SkipSimplifiedLayerNormalization,
// EmbedLayerNormalization, Attention (mask formats, unidirectional, past /
// present) and FusedMatMul; hand-computed values and clear errors.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/model_builder.h"
#include "common/test_env.h"

namespace loom {
namespace {

using testing::float_tensor;
using testing::values_of;
using ::onnx::AttributeProto;
using ::onnx::TensorProto;

constexpr const char* kMs = "com.microsoft";

Tensor int32_tensor(Dims dims, std::vector<int32_t> values) {
  return Tensor::from_vector(DType::kInt32, std::move(dims), values);
}

// One com.microsoft node; inputs are (name, elem type, rank) with an empty name
// for an omitted optional input; outputs likewise ("" = omitted).
struct OneNode {
  testing::ModelBuilder m{17};
  ::onnx::NodeProto* node = nullptr;
  OneNode(const std::string& op, const std::vector<std::tuple<std::string, int32_t, int>>& inputs,
          const std::vector<std::pair<std::string, int32_t>>& outputs, const std::string& domain = kMs) {
    m.import_domain(kMs, 1);
    node = &m.node(op, {}, {}, "", domain);
    for (const auto& [name, type, rank] : inputs) {
      node->add_input(name);
      if (!name.empty()) m.input(name, type, std::vector<int64_t>(static_cast<size_t>(rank), -1));
    }
    for (const auto& [name, type] : outputs) {
      node->add_output(name);
      if (name.empty()) continue;
      m.output(name, type, {});
      auto* g = m.proto().mutable_graph();
      g->mutable_output(g->output_size() - 1)->mutable_type()->mutable_tensor_type()->clear_shape();
    }
  }
  OneNode& attr(const std::string& name, int64_t v) {
    testing::add_int_attr(*node, name, v);
    return *this;
  }
  OneNode& attr_f(const std::string& name, float v) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(AttributeProto::FLOAT);
    a->set_f(v);
    return *this;
  }
  OneNode& attr_ints(const std::string& name, const std::vector<int64_t>& v) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
    return *this;
  }
  Expected<std::vector<Tensor>> run(const std::map<std::string, Tensor>& feeds) {
    auto s = Session::create_from_bytes(testing::reference_env(), m.bytes());
    if (!s.has_value()) return s.status();
    return (*s)->run(feeds);
  }
};

void expect_near(const std::vector<float>& got, const std::vector<double>& want, double tol = 1e-5) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "at " << i;
}

template <class T>
void expect_error(const Expected<T>& out, const std::string& text) {
  ASSERT_FALSE(out.has_value()) << "expected an error containing '" << text << "'";
  EXPECT_NE(out.status().message().find(text), std::string::npos) << out.status().message();
}

constexpr int32_t kF = TensorProto::FLOAT;
constexpr int32_t kI = TensorProto::INT32;

double gelu(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }
double fast_gelu(double x) { return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); }

// --- activations --------------------------------------------------------------

TEST(ContribTest, GeluFamilyMatchesClosedForms) {
  const std::vector<float> x = {-2.0f, -1.0f, 0.0f, 0.5f, 1.0f, 3.0f};
  {
    OneNode g("Gelu", {{"x", kF, 2}}, {{"y", kF}});
    auto out = g.run({{"x", float_tensor({2, 3}, x)}});
    ASSERT_TRUE(out.has_value()) << out.status().message();
    EXPECT_NEAR(values_of((*out)[0])[4], 0.8413447, 1e-6);  // Gelu(1) = Phi(1)
    expect_near(values_of((*out)[0]), {gelu(-2), gelu(-1), 0, gelu(0.5), gelu(1), gelu(3)});
  }
  {
    OneNode g("FastGelu", {{"x", kF, 2}, {"b", kF, 1}}, {{"y", kF}});
    auto out = g.run({{"x", float_tensor({2, 3}, x)}, {"b", float_tensor({3}, {1.0f, 0.0f, -1.0f})}});
    ASSERT_TRUE(out.has_value()) << out.status().message();
    expect_near(values_of((*out)[0]),
                {fast_gelu(-1), fast_gelu(-1), fast_gelu(-1), fast_gelu(1.5), fast_gelu(1), fast_gelu(2)});
  }
  {
    OneNode g("FastGelu", {{"x", kF, 1}}, {{"y", kF}});
    auto out = g.run({{"x", float_tensor({2}, {1.0f, -0.5f})}});
    ASSERT_TRUE(out.has_value()) << out.status().message();
    expect_near(values_of((*out)[0]), {fast_gelu(1), fast_gelu(-0.5)});
  }
  {
    OneNode g("BiasGelu", {{"a", kF, 2}, {"b", kF, 1}}, {{"y", kF}});
    auto out = g.run({{"a", float_tensor({2, 2}, {0.0f, 1.0f, 2.0f, -1.0f})}, {"b", float_tensor({2}, {1.0f, -1.0f})}});
    ASSERT_TRUE(out.has_value()) << out.status().message();
    expect_near(values_of((*out)[0]), {gelu(1), 0.0, gelu(3), gelu(-2)});
  }
  {
    // QuickGelu: x * sigmoid(alpha x), alpha 1.702 by default.
    auto quick = [](double v, double alpha) { return v / (1.0 + std::exp(-alpha * v)); };
    OneNode g("QuickGelu", {{"x", kF, 2}}, {{"y", kF}});
    auto out = g.run({{"x", float_tensor({2, 3}, x)}});
    ASSERT_TRUE(out.has_value()) << out.status().message();
    std::vector<double> want;
    for (float v : x) want.push_back(quick(v, 1.702));
    expect_near(values_of((*out)[0]), want);
    OneNode h("QuickGelu", {{"x", kF, 1}}, {{"y", kF}});
    h.attr_f("alpha", 0.5f);
    auto halved = h.run({{"x", float_tensor({2}, {2.0f, -3.0f})}});
    ASSERT_TRUE(halved.has_value()) << halved.status().message();
    expect_near(values_of((*halved)[0]), {quick(2, 0.5), quick(-3, 0.5)});
  }
  {
    OneNode g("BiasGelu", {{"a", kF, 2}, {"b", kF, 1}}, {{"y", kF}});
    expect_error(g.run({{"a", float_tensor({2, 2}, {0, 0, 0, 0})}, {"b", float_tensor({3}, {0, 0, 0})}}),
                 "BiasGelu: bias must be 1-D with the input's last dimension (2), got [3]");
  }
}

// --- SkipLayerNormalization ------------------------------------------------------

TEST(ContribTest, SkipLayerNormNormalizesTheSumAndReturnsIt) {
  // input + skip + bias = [1, 2, 3, 4] and [2, 2, 2, 2]; mean 2.5, var 1.25.
  OneNode g("SkipLayerNormalization",
            {{"x", kF, 3}, {"skip", kF, 3}, {"gamma", kF, 1}, {"beta", kF, 1}, {"bias", kF, 1}},
            {{"y", kF}, {"mean", kF}, {"inv", kF}, {"sum", kF}});  // default epsilon 1e-12
  auto out = g.run({{"x", float_tensor({1, 2, 4}, {1, 1, 1, 1, 2, 2, 2, 2})},
                    {"skip", float_tensor({1, 2, 4}, {0, 1, 2, 3, 0, 0, 0, 0})},
                    {"gamma", float_tensor({4}, {1, 1, 2, 2})},
                    {"beta", float_tensor({4}, {0, 0, 0, 10})},
                    {"bias", float_tensor({4}, {0, 0, 0, 0})}});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  const double inv = 1 / std::sqrt(1.25);
  expect_near(values_of((*out)[0]), {-1.5 * inv, -0.5 * inv, 2 * 0.5 * inv, 2 * 1.5 * inv + 10, 0, 0, 0, 10});
  EXPECT_EQ((*out)[1].dims(), (Dims{1, 2, 1}));
  expect_near(values_of((*out)[1]), {2.5, 2.0});
  expect_near(values_of((*out)[3]), {1, 2, 3, 4, 2, 2, 2, 2});
}

TEST(ContribTest, SkipLayerNormBroadcastsSkipAndAddsBias) {
  // skip [S, H] broadcast over the batch; bias added before normalising.
  OneNode g("SkipLayerNormalization", {{"x", kF, 3}, {"skip", kF, 2}, {"gamma", kF, 1}, {"", kF, 0}, {"bias", kF, 1}},
            {{"y", kF}, {"", kF}, {"", kF}, {"sum", kF}});
  auto out = g.run({{"x", float_tensor({2, 1, 2}, {0, 0, 5, 5})},
                    {"skip", float_tensor({1, 2}, {1, -1})},
                    {"gamma", float_tensor({2}, {1, 1})},
                    {"bias", float_tensor({2}, {1, 1})}});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  expect_near(values_of((*out)[1]), {2, 0, 7, 5});
  expect_near(values_of((*out)[0]), {1, -1, 1, -1}, 1e-5);
}

TEST(ContribTest, SkipSimplifiedLayerNormIsRmsNorm) {
  OneNode g("SkipSimplifiedLayerNormalization", {{"x", kF, 2}, {"skip", kF, 2}, {"gamma", kF, 1}},
            {{"y", kF}, {"", kF}, {"", kF}, {"sum", kF}});
  g.attr_f("epsilon", 0.0f);
  auto out = g.run({{"x", float_tensor({1, 2}, {3, 0})}, {"skip", float_tensor({1, 2}, {0, 4})},
                    {"gamma", float_tensor({2}, {1, 2})}});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  const double rms = std::sqrt((9 + 16) / 2.0);
  expect_near(values_of((*out)[0]), {3 / rms, 8 / rms});
  expect_near(values_of((*out)[1]), {3, 4});
}

TEST(ContribTest, SkipLayerNormBadShapesGiveClearErrors) {
  {
    OneNode g("SkipLayerNormalization", {{"x", kF, 3}, {"skip", kF, 3}, {"gamma", kF, 1}}, {{"y", kF}});
    expect_error(g.run({{"x", float_tensor({2, 2, 2}, std::vector<float>(8))},
                        {"skip", float_tensor({2, 1, 2}, std::vector<float>(4))},
                        {"gamma", float_tensor({2}, {1, 1})}}),
                 "SkipLayerNormalization: skip of shape [2,1,2] must match input [2,2,2]");
  }
  {
    OneNode g("SkipLayerNormalization", {{"x", kF, 3}, {"skip", kF, 3}, {"gamma", kF, 1}}, {{"y", kF}});
    expect_error(g.run({{"x", float_tensor({1, 2, 2}, std::vector<float>(4))},
                        {"skip", float_tensor({1, 2, 2}, std::vector<float>(4))},
                        {"gamma", float_tensor({3}, {1, 1, 1})}}),
                 "SkipLayerNormalization: gamma must be 1-D of size 2 (the hidden size), got [3]");
  }
}

// --- EmbedLayerNormalization ------------------------------------------------------

TEST(ContribTest, EmbedLayerNormSumsEmbeddingsAndCountsMask) {
  // H = 2: every embedding sum is [a, b] and normalises to [-1, 1] or [1, -1] (eps 0).
  OneNode g("EmbedLayerNormalization",
            {{"ids", kI, 2}, {"seg_ids", kI, 2}, {"word", kF, 2}, {"pos", kF, 2}, {"seg", kF, 2},
             {"gamma", kF, 1}, {"beta", kF, 1}, {"mask", kI, 2}},
            {{"y", kF}, {"mask_index", kI}, {"sum", kF}});
  g.attr_f("epsilon", 0.0f);
  auto out = g.run({{"ids", int32_tensor({2, 2}, {0, 2, 1, 1})},
                    {"seg_ids", int32_tensor({2, 2}, {0, 1, 1, 0})},
                    {"word", float_tensor({3, 2}, {1, 0, 0, 1, 5, 5})},
                    {"pos", float_tensor({2, 2}, {0, 0, 10, 0})},
                    {"seg", float_tensor({2, 2}, {0, 0, 0, 100})},
                    {"gamma", float_tensor({2}, {1, 2})},
                    {"beta", float_tensor({2}, {0, 1})},
                    {"mask", int32_tensor({2, 2}, {1, 0, 1, 2})}});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  // sums: b0s0 = [1,0]; b0s1 = [5,5]+[10,0]+[0,100] = [15,105]; b1s0 = [0,1]+[0,100] = [0,101]; b1s1 = [10,1]
  expect_near(values_of((*out)[2]), {1, 0, 15, 105, 0, 101, 10, 1});
  expect_near(values_of((*out)[0]), {1, -1, -1, 3, -1, 3, 1, -1}, 1e-4);
  // mask_index counts the values equal to 1 (ORT): [1, 0] -> 1, [1, 2] -> 1.
  const int32_t* mi = (*out)[1].data_as<int32_t>();
  EXPECT_EQ(mi[0], 1);
  EXPECT_EQ(mi[1], 1);
}

TEST(ContribTest, EmbedLayerNormBadIndicesGiveClearErrors) {
  auto model = [] {
    return OneNode("EmbedLayerNormalization",
                   {{"ids", kI, 2}, {"", kI, 0}, {"word", kF, 2}, {"pos", kF, 2}, {"", kF, 0}, {"gamma", kF, 1},
                    {"beta", kF, 1}, {"", kI, 0}, {"pos_ids", kI, 2}},
                   {{"y", kF}});
  };
  std::map<std::string, Tensor> feeds = {{"ids", int32_tensor({1, 2}, {0, 4})},
                                         {"word", float_tensor({4, 2}, std::vector<float>(8))},
                                         {"pos", float_tensor({2, 2}, std::vector<float>(4))},
                                         {"gamma", float_tensor({2}, {1, 1})},
                                         {"beta", float_tensor({2}, {0, 0})},
                                         {"pos_ids", int32_tensor({1, 2}, {0, 1})}};
  {
    OneNode g = model();
    expect_error(g.run(feeds), "EmbedLayerNormalization: input_ids value 4 at [0, 1] out of range [0, 4)");
  }
  feeds["ids"] = int32_tensor({1, 2}, {0, 1});
  feeds["pos_ids"] = int32_tensor({1, 2}, {0, -1});
  {
    OneNode g = model();
    expect_error(g.run(feeds), "EmbedLayerNormalization: position_ids value -1 at [0, 1] out of range [0, 2)");
  }
  feeds["pos_ids"] = int32_tensor({1, 3}, {0, 1, 1});
  {
    OneNode g = model();
    expect_error(g.run(feeds), "EmbedLayerNormalization: position_ids must have shape [batch_size, sequence_length] or [1, sequence_length] with batch_size 1 and sequence_length 2, got [1,3]");
  }
}

// --- Attention ----------------------------------------------------------------------

// One head of size 1 with Q = K = V = x (weights all ones, no bias): the
// output of query s is the softmax(x_s * x_t + mask)-weighted mean of x_t.
OneNode attention_model(bool with_mask, int mask_rank) {
  OneNode g("Attention", {{"x", kF, 3}, {"w", kF, 2}, {"bias", kF, 1}, {with_mask ? "mask" : "", kI, mask_rank}},
            {{"y", kF}});
  g.attr("num_heads", 1);
  return g;
}

std::map<std::string, Tensor> attention_feeds(const std::vector<float>& x) {
  return {{"x", float_tensor({1, static_cast<int64_t>(x.size()), 1}, x)},
          {"w", float_tensor({1, 3}, {1, 1, 1})},
          {"bias", float_tensor({3}, {0, 0, 0})}};
}

double weighted(const std::vector<double>& x, const std::vector<double>& scores) {
  double num = 0, den = 0;
  for (size_t t = 0; t < x.size(); ++t) {
    num += std::exp(scores[t]) * x[t];
    den += std::exp(scores[t]);
  }
  return num / den;
}

TEST(ContribTest, AttentionWithoutMaskIsSoftmaxWeightedValues) {
  OneNode g = attention_model(false, 0);
  auto out = g.run(attention_feeds({1, 2}));
  ASSERT_TRUE(out.has_value()) << out.status().message();
  expect_near(values_of((*out)[0]), {weighted({1, 2}, {1, 2}), weighted({1, 2}, {2, 4})});
}

TEST(ContribTest, AttentionMaskFormats) {
  const std::vector<double> x = {1, 2, 3};
  auto run = [&](int rank, Tensor mask) {
    OneNode g = attention_model(true, rank);
    auto feeds = attention_feeds({1, 2, 3});
    feeds.emplace("mask", std::move(mask));
    return g.run(feeds);
  };
  const double f = -10000.0;
  {  // 1-D [B]: keys at or after position 2 are masked.
    auto out = run(1, int32_tensor({1}, {2}));
    ASSERT_TRUE(out.has_value()) << out.status().message();
    expect_near(values_of((*out)[0]), {weighted(x, {1, 2, 3 + f}), weighted(x, {2, 4, 6 + f}), weighted(x, {3, 6, 9 + f})});
  }
  {  // 1-D [2B]: end 3, start 1 -> key 0 masked.
    auto out = run(1, int32_tensor({2}, {3, 1}));
    ASSERT_TRUE(out.has_value()) << out.status().message();
    expect_near(values_of((*out)[0]), {weighted(x, {1 + f, 2, 3}), weighted(x, {2 + f, 4, 6}), weighted(x, {3 + f, 6, 9})});
  }
  {  // 2-D raw [B, T]: 0 masks key 1.
    auto out = run(2, int32_tensor({1, 3}, {1, 0, 1}));
    ASSERT_TRUE(out.has_value()) << out.status().message();
    expect_near(values_of((*out)[0]), {weighted(x, {1, 2 + f, 3}), weighted(x, {2, 4 + f, 6}), weighted(x, {3, 6 + f, 9})});
  }
  {  // 3-D [B, S, T]: query 0 sees only key 0; others see all.
    auto out = run(3, int32_tensor({1, 3, 3}, {1, 0, 0, 1, 1, 1, 1, 1, 1}));
    ASSERT_TRUE(out.has_value()) << out.status().message();
    expect_near(values_of((*out)[0]), {1.0, weighted(x, {2, 4, 6}), weighted(x, {3, 6, 9})});
  }
  {
    auto out = run(4, int32_tensor({1, 1, 3, 3}, std::vector<int32_t>(9, 1)));
    expect_error(out, "Attention: 4-D (Megatron) mask_index [1,1,3,3] is not implemented");
  }
  {
    auto out = run(2, int32_tensor({1, 2}, {1, 1}));
    expect_error(out, "Attention: 2-D mask_index must have shape [batch_size, total_sequence_length] = [1, 3], got [1,2]");
  }
}

TEST(ContribTest, AttentionUnidirectionalAndPastPresent) {
  {
    OneNode g = attention_model(false, 0);
    g.attr("unidirectional", 1);
    auto out = g.run(attention_feeds({1, 2}));
    ASSERT_TRUE(out.has_value()) << out.status().message();
    expect_near(values_of((*out)[0]), {1.0, weighted({1, 2}, {2, 4})});
  }
  {  // past K = V = [5] (one earlier token), causal: query 0 sees the past and itself.
    OneNode g("Attention", {{"x", kF, 3}, {"w", kF, 2}, {"bias", kF, 1}, {"", kI, 0}, {"past", kF, 5}},
              {{"y", kF}, {"present", kF}});
    g.attr("num_heads", 1).attr("unidirectional", 1);
    auto feeds = attention_feeds({1, 2});
    feeds.emplace("past", float_tensor({2, 1, 1, 1, 1}, {5, 5}));
    auto out = g.run(feeds);
    ASSERT_TRUE(out.has_value()) << out.status().message();
    expect_near(values_of((*out)[0]), {weighted({5, 1}, {5, 1}), weighted({5, 1, 2}, {10, 2, 4})});
    EXPECT_EQ((*out)[1].dims(), (Dims{2, 1, 1, 3, 1}));
    expect_near(values_of((*out)[1]), {5, 1, 2, 5, 1, 2});
  }
}

TEST(ContribTest, AttentionBadInputsGiveClearErrors) {
  {
    OneNode g = attention_model(false, 0);
    auto feeds = attention_feeds({1, 2});
    feeds["w"] = float_tensor({2, 3}, std::vector<float>(6));
    expect_error(g.run(feeds), "Attention: weights must be 2-D [1, D + D + D_v], got [2,3]");
  }
  {
    OneNode g = attention_model(false, 0);
    g.attr("do_rotary", 1);
    expect_error(g.run(attention_feeds({1, 2})), "Attention: do_rotary=1 (rotary embeddings) is not implemented");
  }
  {
    OneNode g = attention_model(false, 0);
    g.attr_ints("qkv_hidden_sizes", {1, 2, 0});
    expect_error(g.run(attention_feeds({1, 2})), "Attention: qkv_hidden_sizes Q and K sizes differ (1 vs 2)");
  }
}

// --- FusedMatMul ----------------------------------------------------------------------

TEST(ContribTest, FusedMatMulTransposesAndScales) {
  OneNode g("FusedMatMul", {{"a", kF, 2}, {"b", kF, 2}}, {{"y", kF}});
  g.attr("transA", 1).attr("transB", 1).attr_f("alpha", 2.0f);
  // A^T = [[1, 3], [2, 4]], B^T = [[1, 0], [1, 1]] -> A^T B^T = [[4, 3], [6, 4]].
  auto out = g.run({{"a", float_tensor({2, 2}, {1, 2, 3, 4})}, {"b", float_tensor({2, 2}, {1, 1, 0, 1})}});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  expect_near(values_of((*out)[0]), {8, 6, 12, 8});
}

TEST(ContribTest, FusedMatMulErrors) {
  {
    OneNode g("FusedMatMul", {{"a", kF, 2}, {"b", kF, 2}}, {{"y", kF}});
    g.attr("transBatchA", 1);
    expect_error(g.run({{"a", float_tensor({2, 2}, {1, 2, 3, 4})}, {"b", float_tensor({2, 2}, {1, 1, 0, 1})}}),
                 "FusedMatMul: transBatchA / transBatchB = 1 is not implemented");
  }
  {
    OneNode g("FusedMatMul", {{"a", kF, 2}, {"b", kF, 2}}, {{"y", kF}});
    g.attr("transA", 1);
    expect_error(g.run({{"a", float_tensor({3, 2}, std::vector<float>(6))}, {"b", float_tensor({2, 2}, {1, 1, 0, 1})}}),
                 "FusedMatMul: inner dimensions differ: op(A) has K = 3");
  }
}

}  // namespace
}  // namespace loom
