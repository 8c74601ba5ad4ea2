// LinearAttention-27 and CausalConvWithState-27 on the reference EP:
// recurrences worked by hand, the state carried from one call to the next,
// and near-misses refused with an error naming the op and the node.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "unit/reference/one_node_model.h"

namespace loom {
namespace {

using ::onnx::TensorProto;
using testing::float_tensor;
using testing::OneNodeModel;
using testing::values_of;

void expect_near(const std::vector<float>& got, const std::vector<float>& want, float tol = 1e-5f) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

void expect_refused(OneNodeModel& g, const std::string& op, const std::string& words) {
  auto out = g.run();
  ASSERT_FALSE(out.has_value()) << op << ": expected an error about " << words;
  const std::string& m = out.status().message();
  EXPECT_NE(m.find(op), std::string::npos) << m;
  EXPECT_NE(m.find("under_test"), std::string::npos) << m;
  EXPECT_NE(m.find(words), std::string::npos) << m;
}

TEST(RecurrentStateTest, LinearAttentionAccumulatesOuterProducts) {
  // One head, dk = dv = 1, two steps, scale 1: S1 = k1 v1, S2 = S1 + k2 v2.
  OneNodeModel g("LinearAttention", 27,
                 {{"q", float_tensor({1, 2, 1}, {1, 2})},
                  {"k", float_tensor({1, 2, 1}, {3, 4})},
                  {"v", float_tensor({1, 2, 1}, {5, 6})}},
                 {{"y", TensorProto::FLOAT}, {"state", TensorProto::FLOAT}});
  g.attr("q_num_heads", int64_t{1}).attr("kv_num_heads", int64_t{1}).attr("update_rule", std::string("linear"));
  g.attr("scale", 1.0f);
  auto out = g.run();
  ASSERT_TRUE(out.has_value()) << out.status().message();
  expect_near(values_of((*out)[0]), {1 * 15.f, 2 * (15.f + 24.f)});
  expect_near(values_of((*out)[1]), {39.f});
}

TEST(RecurrentStateTest, GatedDeltaRuleDecaysAndCorrects) {
  // One step from past state 2: S = 2 e^g; v' = beta (v - S k); S += k v'.
  const float g = -0.5f, beta = 0.25f, k = 3, v = 7, past = 2, q = 1.5f;
  OneNodeModel m("LinearAttention", 27,
                 {{"q", float_tensor({1, 1, 1}, {q})},
                  {"k", float_tensor({1, 1, 1}, {k})},
                  {"v", float_tensor({1, 1, 1}, {v})},
                  {"past", float_tensor({1, 1, 1, 1}, {past})},
                  {"decay", float_tensor({1, 1, 1}, {g})},
                  {"beta", float_tensor({1, 1, 1}, {beta})}},
                 {{"y", TensorProto::FLOAT}, {"state", TensorProto::FLOAT}});
  m.attr("q_num_heads", int64_t{1}).attr("kv_num_heads", int64_t{1});
  auto out = m.run();
  ASSERT_TRUE(out.has_value()) << out.status().message();
  const float s1 = past * std::exp(g);
  const float s2 = s1 + k * beta * (v - s1 * k);
  expect_near(values_of((*out)[1]), {s2});
  expect_near(values_of((*out)[0]), {q * s2});  // scale 1 / sqrt(dk) = 1
}

TEST(RecurrentStateTest, LinearAttentionNearMisses) {
  auto base = [] {
    return std::vector<std::pair<std::string, Tensor>>{{"q", float_tensor({1, 1, 4}, {1, 2, 3, 4})},
                                                       {"k", float_tensor({1, 1, 4}, {1, 2, 3, 4})},
                                                       {"v", float_tensor({1, 1, 4}, {1, 2, 3, 4})}};
  };
  {
    OneNodeModel g("LinearAttention", 27, base(), {{"y", TensorProto::FLOAT}});
    g.attr("q_num_heads", int64_t{3}).attr("kv_num_heads", int64_t{2}).attr("update_rule", std::string("linear"));
    expect_refused(g, "LinearAttention", "positive multiple");
  }
  {
    OneNodeModel g("LinearAttention", 27, base(), {{"y", TensorProto::FLOAT}});
    g.attr("q_num_heads", int64_t{2}).attr("kv_num_heads", int64_t{2});  // gated_delta without decay
    expect_refused(g, "LinearAttention", "requires the decay input");
  }
  {
    auto in = base();
    in.push_back({"past", float_tensor({1, 2, 2, 3}, std::vector<float>(12, 0))});
    OneNodeModel g("LinearAttention", 27, std::move(in), {{"y", TensorProto::FLOAT}});
    g.attr("q_num_heads", int64_t{2}).attr("kv_num_heads", int64_t{2}).attr("update_rule", std::string("linear"));
    expect_refused(g, "LinearAttention", "past_state must be");
  }
}

TEST(RecurrentStateTest, CausalConvCarriesItsStateAcrossCalls) {
  // Channel kernel [1, 2, 3] over [4, 5] with past [1, 1]: outputs
  // 1*1 + 2*1 + 3*4 and 1*1 + 2*4 + 3*5; the new state is [4, 5].
  OneNodeModel g("CausalConvWithState", 27,
                 {{"x", float_tensor({1, 1, 2}, {4, 5})},
                  {"w", float_tensor({1, 1, 3}, {1, 2, 3})},
                  {"", Tensor()},
                  {"past", float_tensor({1, 1, 2}, {1, 1})}},
                 {{"y", TensorProto::FLOAT}, {"state", TensorProto::FLOAT}});
  auto out = g.run();
  ASSERT_TRUE(out.has_value()) << out.status().message();
  expect_near(values_of((*out)[0]), {15, 24});
  expect_near(values_of((*out)[1]), {4, 5});
  OneNodeModel silu("CausalConvWithState", 27, {{"x", float_tensor({1, 1, 1}, {2})}, {"w", float_tensor({1, 1, 1}, {1})}},
                    {{"y", TensorProto::FLOAT}});
  silu.attr("activation", std::string("silu"));
  auto s = silu.run();
  ASSERT_TRUE(s.has_value()) << s.status().message();
  expect_near(values_of((*s)[0]), {2.f / (1.f + std::exp(-2.f))});
}

TEST(RecurrentStateTest, CausalConvNearMisses) {
  OneNodeModel weight("CausalConvWithState", 27, {{"x", float_tensor({1, 2, 2}, {1, 2, 3, 4})}, {"w", float_tensor({1, 1, 3}, {1, 2, 3})}},
                      {{"y", TensorProto::FLOAT}});
  expect_refused(weight, "CausalConvWithState", "weight must be");
  OneNodeModel past("CausalConvWithState", 27,
                    {{"x", float_tensor({1, 1, 2}, {1, 2})},
                     {"w", float_tensor({1, 1, 3}, {1, 2, 3})},
                     {"", Tensor()},
                     {"past", float_tensor({1, 1, 3}, {1, 1, 1})}},
                    {{"y", TensorProto::FLOAT}});
  expect_refused(past, "CausalConvWithState", "past_state must be");
  OneNodeModel act("CausalConvWithState", 27, {{"x", float_tensor({1, 1, 1}, {2})}, {"w", float_tensor({1, 1, 1}, {1})}},
                   {{"y", TensorProto::FLOAT}});
  act.attr("activation", std::string("gelu"));
  expect_refused(act, "CausalConvWithState", "none, silu or swish");
}

}  // namespace
}  // namespace loom
