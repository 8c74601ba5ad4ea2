// Attention-23/24 and RotaryEmbedding-23 on the reference EP: results
// against a direct transcription of the formulas (GQA, KV cache, causal and
// boolean masks, 3-D layout), and near-misses -- inconsistent shapes and
// attributes -- refused with an error naming the op and the node.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "unit/reference/one_node_model.h"

namespace loom {
namespace {

using ::onnx::TensorProto;
using testing::float_tensor;
using testing::OneNodeModel;
using testing::values_of;

std::vector<float> ramp(size_t n, float scale, float offset = 0.f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::sin(static_cast<float>(i) * scale + offset);
  return v;
}

// Y for 4-D Q [B, Hq, S, D], K/V [B, Hkv, T, D] (already including any
// past), additive mask [S, T] (empty: none), causal offset `past`.
std::vector<float> naive_attention(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                                   int B, int Hq, int Hkv, int S, int T, int D, bool causal, int past,
                                   const std::vector<float>& mask) {
  std::vector<float> y(static_cast<size_t>(B * Hq * S * D), 0.f);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < Hq; ++h) {
      const int kv = h / (Hq / Hkv);
      for (int i = 0; i < S; ++i) {
        std::vector<double> w(static_cast<size_t>(T));
        double max = -INFINITY, sum = 0;
        for (int j = 0; j < T; ++j) {
          double s = 0;
          for (int e = 0; e < D; ++e)
            s += q[((b * Hq + h) * S + i) * D + e] * k[((b * Hkv + kv) * T + j) * D + e];
          s /= std::sqrt(static_cast<double>(D));
          if (!mask.empty()) s += mask[i * T + j];
          if (causal && j > i + past) s = -INFINITY;
          w[j] = s;
          max = std::max(max, s);
        }
        for (double& x : w) sum += (x = std::exp(x - max));
        for (int j = 0; j < T; ++j)
          for (int e = 0; e < D; ++e)
            y[((b * Hq + h) * S + i) * D + e] += static_cast<float>(w[j] / sum * v[((b * Hkv + kv) * T + j) * D + e]);
      }
    }
  return y;
}

void expect_near(const std::vector<float>& got, const std::vector<float>& want, float tol = 1e-5f) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

void expect_refused(OneNodeModel& g, const std::string& words) {
  auto out = g.run();
  ASSERT_FALSE(out.has_value()) << "expected an error about " << words;
  EXPECT_NE(out.status().message().find("Attention"), std::string::npos) << out.status().message();
  EXPECT_NE(out.status().message().find("under_test"), std::string::npos) << out.status().message();
  EXPECT_NE(out.status().message().find(words), std::string::npos) << out.status().message();
}

TEST(AttentionTest, GroupedQueryAttentionWithPastAndCausalMask) {
  const int B = 2, Hq = 4, Hkv = 2, S = 3, P = 2, T = P + S, D = 4;
  const auto q = ramp(B * Hq * S * D, 0.37f), k = ramp(B * Hkv * S * D, 0.21f, 1.f), v = ramp(B * Hkv * S * D, 0.13f, 2.f);
  const auto pk = ramp(B * Hkv * P * D, 0.3f, 3.f), pv = ramp(B * Hkv * P * D, 0.17f, 4.f);
  OneNodeModel g("Attention", 23,
                 {{"q", float_tensor({B, Hq, S, D}, q)},
                  {"k", float_tensor({B, Hkv, S, D}, k)},
                  {"v", float_tensor({B, Hkv, S, D}, v)},
                  {"", Tensor()},
                  {"pk", float_tensor({B, Hkv, P, D}, pk)},
                  {"pv", float_tensor({B, Hkv, P, D}, pv)}},
                 {{"y", TensorProto::FLOAT}, {"present_k", TensorProto::FLOAT}, {"present_v", TensorProto::FLOAT}});
  g.attr("is_causal", int64_t{1});
  auto out = g.run();
  ASSERT_TRUE(out.has_value()) << out.status().message();
  // The cache: past rows, then the new ones, per (batch, head).
  std::vector<float> kk, vv;
  for (int bh = 0; bh < B * Hkv; ++bh) {
    kk.insert(kk.end(), pk.begin() + bh * P * D, pk.begin() + (bh + 1) * P * D);
    kk.insert(kk.end(), k.begin() + bh * S * D, k.begin() + (bh + 1) * S * D);
    vv.insert(vv.end(), pv.begin() + bh * P * D, pv.begin() + (bh + 1) * P * D);
    vv.insert(vv.end(), v.begin() + bh * S * D, v.begin() + (bh + 1) * S * D);
  }
  EXPECT_EQ((*out)[1].dims(), (Dims{B, Hkv, T, D}));
  expect_near(values_of((*out)[1]), kk);
  expect_near(values_of((*out)[2]), vv);
  EXPECT_EQ((*out)[0].dims(), (Dims{B, Hq, S, D}));
  expect_near(values_of((*out)[0]), naive_attention(q, kk, vv, B, Hq, Hkv, S, T, D, true, P, {}));
}

TEST(AttentionTest, ThreeDimensionalInputsAreHeadsSideBySide) {
  // 3-D [B, S, H * D] is the 4-D [B, H, S, D] with heads and sequence swapped.
  const int B = 1, H = 2, S = 3, D = 2;
  const auto q4 = ramp(B * H * S * D, 0.5f), k4 = ramp(B * H * S * D, 0.7f, 1.f), v4 = ramp(B * H * S * D, 0.9f, 2.f);
  auto to3d = [&](const std::vector<float>& x) {
    std::vector<float> y(x.size());
    for (int h = 0; h < H; ++h)
      for (int s = 0; s < S; ++s)
        for (int e = 0; e < D; ++e) y[(s * H + h) * D + e] = x[(h * S + s) * D + e];
    return y;
  };
  OneNodeModel g("Attention", 23,
                 {{"q", float_tensor({B, S, H * D}, to3d(q4))},
                  {"k", float_tensor({B, S, H * D}, to3d(k4))},
                  {"v", float_tensor({B, S, H * D}, to3d(v4))}},
                 {{"y", TensorProto::FLOAT}});
  g.attr("q_num_heads", int64_t{H}).attr("kv_num_heads", int64_t{H});
  auto out = g.run();
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ((*out)[0].dims(), (Dims{B, S, H * D}));
  expect_near(values_of((*out)[0]), to3d(naive_attention(q4, k4, v4, B, H, H, S, S, D, false, 0, {})));
}

TEST(AttentionTest, BooleanMaskMatchesAdditiveMaskAndFullyMaskedRowsGiveZeros) {
  const int S = 2, T = 3, D = 2;
  const auto q = ramp(S * D, 0.4f), k = ramp(T * D, 0.6f, 1.f), v = ramp(T * D, 0.8f, 2.f);
  // Row 0 sees keys 0 and 2; row 1 sees nothing.
  const std::vector<bool> allowed = {true, false, true, false, false, false};
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> additive = {0, -inf, 0, -inf, -inf, -inf};
  std::vector<std::vector<float>> results;
  for (bool boolean : {true, false}) {
    Tensor mask = boolean ? Tensor::from_vector(DType::kBool, {S, T}, std::vector<uint8_t>{1, 0, 1, 0, 0, 0})
                          : float_tensor({S, T}, additive);
    OneNodeModel g("Attention", 23,
                   {{"q", float_tensor({1, 1, S, D}, q)},
                    {"k", float_tensor({1, 1, T, D}, k)},
                    {"v", float_tensor({1, 1, T, D}, v)},
                    {"mask", std::move(mask)}},
                   {{"y", TensorProto::FLOAT}, {"", 0}, {"", 0}, {"qk", TensorProto::FLOAT}});
    g.attr("qk_matmul_output_mode", int64_t{3});
    auto out = g.run();
    ASSERT_TRUE(out.has_value()) << out.status().message();
    results.push_back(values_of((*out)[0]));
    const std::vector<float> weights = values_of((*out)[1]);  // graph outputs: y, qk
    EXPECT_NEAR(weights[0] + weights[2], 1.0f, 1e-6f);
    EXPECT_EQ(weights[1], 0.f);
    for (int j = 0; j < T; ++j) EXPECT_EQ(weights[T + j], 0.f) << "fully masked row";
  }
  (void)allowed;
  expect_near(results[0], results[1]);
  EXPECT_EQ(results[0][2], 0.f);  // row 1 of Y: no key, no value
  EXPECT_EQ(results[0][3], 0.f);
}

TEST(AttentionTest, SoftcapBoundsTheScores) {
  const int S = 2, D = 4;
  std::vector<float> big(S * D, 10.f);
  OneNodeModel g("Attention", 23,
                 {{"q", float_tensor({1, 1, S, D}, big)}, {"k", float_tensor({1, 1, S, D}, big)},
                  {"v", float_tensor({1, 1, S, D}, ramp(S * D, 1.f))}},
                 {{"y", TensorProto::FLOAT}, {"", 0}, {"", 0}, {"qk", TensorProto::FLOAT}});
  g.attr("softcap", 3.0f).attr("qk_matmul_output_mode", int64_t{1});
  auto out = g.run();
  ASSERT_TRUE(out.has_value()) << out.status().message();
  for (float s : values_of((*out)[1])) EXPECT_NEAR(s, 3.0f * std::tanh(100.f / 3.f), 1e-5f);
}

// Inputs of the near-miss cases: Q [1, 4, 2, 4], K/V [1, 2, 3, 4].
std::vector<std::pair<std::string, Tensor>> qkv(Dims q = {1, 4, 2, 4}, Dims k = {1, 2, 3, 4}, Dims v = {1, 2, 3, 4}) {
  auto t = [](Dims d) {
    int64_t n = 1;
    for (int64_t x : d) n *= x;
    return float_tensor(d, std::vector<float>(static_cast<size_t>(n), 0.5f));
  };
  return {{"q", t(q)}, {"k", t(k)}, {"v", t(v)}};
}

TEST(AttentionTest, NearMissesAreRefusedNamingTheNode) {
  {
    OneNodeModel g("Attention", 23, qkv({1, 3, 2, 4}), {{"y", TensorProto::FLOAT}});
    expect_refused(g, "multiple of kv heads");
  }
  {
    OneNodeModel g("Attention", 23, qkv({1, 4, 2, 5}), {{"y", TensorProto::FLOAT}});
    expect_refused(g, "head sizes differ");
  }
  {
    OneNodeModel g("Attention", 23, qkv({1, 2, 8}, {1, 3, 8}, {1, 3, 8}), {{"y", TensorProto::FLOAT}});
    expect_refused(g, "q_num_heads");
  }
  {
    OneNodeModel g("Attention", 23, qkv({1, 2, 8}, {1, 3, 8}, {1, 3, 8}), {{"y", TensorProto::FLOAT}});
    g.attr("q_num_heads", int64_t{3}).attr("kv_num_heads", int64_t{2});
    expect_refused(g, "not a multiple of 3 heads");
  }
  {
    auto in = qkv();
    in.push_back({"mask", float_tensor({3, 3}, std::vector<float>(9, 0.f))});
    OneNodeModel g("Attention", 23, std::move(in), {{"y", TensorProto::FLOAT}});
    expect_refused(g, "does not broadcast");
  }
  {
    auto in = qkv();
    in.push_back({"mask", float_tensor({2, 7}, std::vector<float>(14, 0.f))});
    OneNodeModel g("Attention", 23, std::move(in), {{"y", TensorProto::FLOAT}});
    expect_refused(g, "over the total sequence");
  }
  {
    auto in = qkv();
    in.push_back({"", Tensor()});
    in.push_back({"pk", float_tensor({1, 2, 1, 3}, std::vector<float>(6, 0.f))});
    in.push_back({"pv", float_tensor({1, 2, 1, 4}, std::vector<float>(8, 0.f))});
    OneNodeModel g("Attention", 23, std::move(in), {{"y", TensorProto::FLOAT}});
    expect_refused(g, "past_key must be");
  }
  {
    auto in = qkv();
    for (int i = 0; i < 3; ++i) in.push_back({"", Tensor()});
    in.push_back({"lens", Tensor::from_vector(DType::kInt64, {2}, std::vector<int64_t>{1, 2})});
    OneNodeModel g("Attention", 24, std::move(in), {{"y", TensorProto::FLOAT}});
    expect_refused(g, "nonpad_kv_seqlen");
  }
  {
    OneNodeModel g("Attention", 23, qkv(), {{"y", TensorProto::FLOAT}});
    g.attr("qk_matmul_output_mode", int64_t{7});
    expect_refused(g, "qk_matmul_output_mode");
  }
}

TEST(RotaryEmbeddingTest, RotatesPairsByTheCachedAngle) {
  // One head of size 4, rotary dim 4: pairs (0, 2) and (1, 3), or (0, 1)
  // and (2, 3) interleaved; position 1 of the cache.
  const std::vector<float> x = {1, 2, 3, 4};
  const float c0 = 0.5f, c1 = -0.25f, s0 = 0.75f, s1 = 0.1f;
  for (bool interleaved : {false, true}) {
    OneNodeModel g("RotaryEmbedding", 23,
                   {{"x", float_tensor({1, 1, 1, 4}, x)},
                    {"cos", float_tensor({2, 2}, {9, 9, c0, c1})},
                    {"sin", float_tensor({2, 2}, {9, 9, s0, s1})},
                    {"pos", Tensor::from_vector(DType::kInt64, {1, 1}, std::vector<int64_t>{1})}},
                   {{"y", TensorProto::FLOAT}});
    g.attr("interleaved", int64_t{interleaved});
    auto out = g.run();
    ASSERT_TRUE(out.has_value()) << out.status().message();
    const int a0 = 0, b0 = interleaved ? 1 : 2, a1 = interleaved ? 2 : 1, b1 = 3;
    std::vector<float> want(4);
    want[a0] = c0 * x[a0] - s0 * x[b0];
    want[b0] = s0 * x[a0] + c0 * x[b0];
    want[a1] = c1 * x[a1] - s1 * x[b1];
    want[b1] = s1 * x[a1] + c1 * x[b1];
    expect_near(values_of((*out)[0]), want);
  }
}

TEST(RotaryEmbeddingTest, NearMissesAreRefused) {
  auto run = [](int64_t position, int64_t rotary_dim) {
    OneNodeModel g("RotaryEmbedding", 23,
                   {{"x", float_tensor({1, 1, 1, 4}, {1, 2, 3, 4})},
                    {"cos", float_tensor({2, 2}, {1, 1, 1, 1})},
                    {"sin", float_tensor({2, 2}, {0, 0, 0, 0})},
                    {"pos", Tensor::from_vector(DType::kInt64, {1, 1}, std::vector<int64_t>{position})}},
                   {{"y", TensorProto::FLOAT}});
    g.attr("rotary_embedding_dim", rotary_dim);
    return g.run();
  };
  ASSERT_TRUE(run(1, 4).has_value());
  for (auto [position, dim, words] : std::vector<std::tuple<int64_t, int64_t, std::string>>{
           {2, 4, "outside the caches"}, {-1, 4, "outside the caches"}, {0, 3, "must be even"}, {0, 6, "at most"}}) {
    auto out = run(position, dim);
    ASSERT_FALSE(out.has_value());
    EXPECT_NE(out.status().message().find("RotaryEmbedding"), std::string::npos) << out.status().message();
    EXPECT_NE(out.status().message().find(words), std::string::npos) << out.status().message();
  }
}

}  // namespace
}  // namespace loom
