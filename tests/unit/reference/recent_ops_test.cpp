// The reference EP's kernels for ops of opsets 18 to 26 (other than
// Attention and RotaryEmbedding: attention_test.cpp): a worked case each
// and near-misses (inconsistent shapes or attributes) refused with an
// error naming the op and the node -- never a crash or a wrapped size.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <vector>

#include "unit/reference/one_node_model.h"

namespace loom {
namespace {

using ::onnx::TensorProto;
using testing::float_tensor;
using testing::OneNodeModel;
using testing::values_of;

Tensor int64s(Dims dims, std::vector<int64_t> v) { return Tensor::from_vector(DType::kInt64, std::move(dims), v); }
Tensor int32s(Dims dims, std::vector<int32_t> v) { return Tensor::from_vector(DType::kInt32, std::move(dims), v); }

std::vector<int32_t> int32_values(const Tensor& t) {
  const int32_t* p = t.data_as<int32_t>();
  return std::vector<int32_t>(p, p + t.element_count());
}

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

TEST(RecentOpsTest, BitwiseOpsBroadcast) {
  const std::vector<std::pair<std::string, std::vector<int32_t>>> cases = {
      {"BitwiseAnd", {0b0100, 0b0000, 0b0100, 0b0000}},
      {"BitwiseOr", {0b1110, 0b1110, 0b0111, 0b0111}},
      {"BitwiseXor", {0b1010, 0b1110, 0b0011, 0b0111}}};
  for (const auto& [op, want] : cases) {
    OneNodeModel g(op, 18, {{"a", int32s({2, 2}, {0b1100, 0b1010, 0b0101, 0b0011})}, {"b", int32s({2}, {0b0110, 0b0100})}},
                   {{"c", TensorProto::INT32}});
    auto out = g.run();
    ASSERT_TRUE(out.has_value()) << out.status().message();
    EXPECT_EQ(int32_values((*out)[0]), want) << op;
  }
  OneNodeModel n("BitwiseNot", 18, {{"x", int32s({2}, {0, -1})}}, {{"y", TensorProto::INT32}});
  auto out = n.run();
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ(int32_values((*out)[0]), (std::vector<int32_t>{-1, 0}));
  OneNodeModel bad("BitwiseAnd", 18, {{"a", int32s({3}, {1, 2, 3})}, {"b", int32s({2}, {1, 2})}},
                   {{"c", TensorProto::INT32}});
  auto refused = bad.run();
  EXPECT_FALSE(refused.has_value());
}

TEST(RecentOpsTest, ActivationsMatchTheirFormulas) {
  const std::vector<float> x = {-3.f, -0.5f, 0.f, 0.7f, 4.f};
  auto run = [&](const std::string& op, int64_t opset, const std::function<void(OneNodeModel&)>& attrs) {
    OneNodeModel g(op, opset, {{"x", float_tensor({5}, x)}}, {{"y", TensorProto::FLOAT}});
    if (attrs) attrs(g);
    auto out = g.run();
    EXPECT_TRUE(out.has_value()) << out.status().message();
    return out.has_value() ? values_of((*out)[0]) : std::vector<float>{};
  };
  std::vector<float> gelu, gelu_tanh, mish, swish;
  for (float v : x) {
    gelu.push_back(0.5f * v * (1 + std::erf(v / std::sqrt(2.f))));
    gelu_tanh.push_back(0.5f * v * (1 + std::tanh(std::sqrt(2 / static_cast<float>(M_PI)) * (v + 0.044715f * v * v * v))));
    mish.push_back(v * std::tanh(std::log1p(std::exp(v))));
    swish.push_back(v / (1 + std::exp(-2.f * v)));
  }
  expect_near(run("Gelu", 20, nullptr), gelu);
  expect_near(run("Gelu", 20, [](OneNodeModel& g) { g.attr("approximate", std::string("tanh")); }), gelu_tanh);
  expect_near(run("Mish", 22, nullptr), mish);
  expect_near(run("Swish", 24, [](OneNodeModel& g) { g.attr("alpha", 2.0f); }), swish);
  OneNodeModel bad("Gelu", 20, {{"x", float_tensor({5}, x)}}, {{"y", TensorProto::FLOAT}});
  bad.attr("approximate", std::string("erf"));
  expect_refused(bad, "Gelu", "'none' or 'tanh'");
}

TEST(RecentOpsTest, SwiGluGatesTheSecondInputAndBroadcasts) {
  OneNodeModel g("SwiGLU", 28, {{"a", float_tensor({2}, {1.f, -2.f})}, {"b", float_tensor({}, {3.f})}},
                 {{"y", TensorProto::FLOAT}});
  g.attr("alpha", 0.5f);
  auto out = g.run();
  ASSERT_TRUE(out.has_value()) << out.status().message();
  expect_near(values_of((*out)[0]), {3.f / (1 + std::exp(-0.5f)), -6.f / (1 + std::exp(1.f))});
  OneNodeModel bad("SwiGLU", 28, {{"a", float_tensor({2}, {1, 2})}, {"b", float_tensor({3}, {1, 2, 3})}},
                   {{"y", TensorProto::FLOAT}});
  EXPECT_FALSE(bad.run().has_value());
}

TEST(RecentOpsTest, VolumetricGridSampleInterpolatesTrilinearly) {
  // X [1, 1, 2, 2, 2] = 0..7 (z, y, x); the grid's centre point (0, 0, 0)
  // with align_corners is the mean of all eight, and a corner is a corner.
  std::vector<float> x(8);
  for (int i = 0; i < 8; ++i) x[i] = static_cast<float>(i);
  OneNodeModel g("GridSample", 20,
                 {{"x", float_tensor({1, 1, 2, 2, 2}, x)}, {"grid", float_tensor({1, 1, 1, 2, 3}, {0, 0, 0, 1, 1, 1})}},
                 {{"y", TensorProto::FLOAT}});
  g.attr("align_corners", int64_t{1});
  auto out = g.run();
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ((*out)[0].dims(), (Dims{1, 1, 1, 1, 2}));
  expect_near(values_of((*out)[0]), {3.5f, 7.f});
  OneNodeModel huge("GridSample", 20,
                    {{"x", float_tensor({1, 1, 2, 2, 2}, x)}, {"grid", float_tensor({1, 1, 1, 1, 3}, {1e30f, 0, 0})}},
                    {{"y", TensorProto::FLOAT}});
  auto far = huge.run();  // far outside: zero padding, no out-of-range conversion
  ASSERT_TRUE(far.has_value()) << far.status().message();
  expect_near(values_of((*far)[0]), {0.f});
  OneNodeModel bad("GridSample", 20,
                   {{"x", float_tensor({1, 1, 2, 2, 2}, x)}, {"grid", float_tensor({1, 1, 1, 1, 2}, {0, 0})}},
                   {{"y", TensorProto::FLOAT}});
  expect_refused(bad, "GridSample", "needs grid");
}

TEST(RecentOpsTest, BitCastKeepsTheBitsAndRefusesOtherWidths) {
  OneNodeModel g("BitCast", 26, {{"x", float_tensor({2}, {1.0f, -2.0f})}}, {{"y", TensorProto::INT32}});
  g.attr("to", int64_t{TensorProto::INT32});
  auto out = g.run();
  ASSERT_TRUE(out.has_value()) << out.status().message();
  const std::vector<int32_t> bits = int32_values((*out)[0]);
  float back[2];
  std::memcpy(back, bits.data(), sizeof back);
  EXPECT_EQ(back[0], 1.0f);
  EXPECT_EQ(back[1], -2.0f);
  OneNodeModel wide("BitCast", 26, {{"x", float_tensor({2}, {1.0f, -2.0f})}}, {{"y", TensorProto::INT64}});
  wide.attr("to", int64_t{TensorProto::INT64});
  expect_refused(wide, "BitCast", "differ in width");
}

TEST(RecentOpsTest, CumProdExclusiveReverseAndAxisChecks) {
  OneNodeModel g("CumProd", 26, {{"x", float_tensor({2, 3}, {1, 2, 3, 4, 5, 6})}, {"axis", int64s({}, {1})}},
                 {{"y", TensorProto::FLOAT}});
  g.attr("exclusive", int64_t{1}).attr("reverse", int64_t{1});
  auto out = g.run();
  ASSERT_TRUE(out.has_value()) << out.status().message();
  expect_near(values_of((*out)[0]), {6, 3, 1, 30, 6, 1});
  // int32 products wrap like numpy's instead of overflowing.
  OneNodeModel w("CumProd", 26, {{"x", int32s({3}, {65536, 65536, 3})}, {"axis", int64s({}, {0})}},
                 {{"y", TensorProto::INT32}});
  auto wrapped = w.run();
  ASSERT_TRUE(wrapped.has_value()) << wrapped.status().message();
  EXPECT_EQ(int32_values((*wrapped)[0]), (std::vector<int32_t>{65536, 0, 0}));
  OneNodeModel bad("CumProd", 26, {{"x", float_tensor({2}, {1, 2})}, {"axis", int64s({}, {2})}},
                   {{"y", TensorProto::FLOAT}});
  expect_refused(bad, "CumProd", "out of range");
}

TEST(RecentOpsTest, RmsAndGroupNormalization) {
  OneNodeModel rms("RMSNormalization", 23, {{"x", float_tensor({2, 2}, {3, 4, 0, 2})}, {"s", float_tensor({2}, {1, 2})}},
                   {{"y", TensorProto::FLOAT}});
  rms.attr("epsilon", 0.0f);
  auto out = rms.run();
  ASSERT_TRUE(out.has_value()) << out.status().message();
  const float r0 = std::sqrt(12.5f), r1 = std::sqrt(2.f);
  expect_near(values_of((*out)[0]), {3 / r0, 8 / r0, 0, 4 / r1});
  OneNodeModel rms_bad("RMSNormalization", 23, {{"x", float_tensor({2, 2}, {3, 4, 0, 2})}, {"s", float_tensor({3}, {1, 2, 3})}},
                       {{"y", TensorProto::FLOAT}});
  expect_refused(rms_bad, "RMSNormalization", "does not broadcast");

  // Two groups of one channel, two positions each: (x - mean) / std.
  OneNodeModel gn("GroupNormalization", 21,
                  {{"x", float_tensor({1, 2, 2}, {1, 3, 10, 20})},
                   {"scale", float_tensor({2}, {1, 2})},
                   {"bias", float_tensor({2}, {0, 1})}},
                  {{"y", TensorProto::FLOAT}});
  gn.attr("num_groups", int64_t{2}).attr("epsilon", 0.0f);
  auto g_out = gn.run();
  ASSERT_TRUE(g_out.has_value()) << g_out.status().message();
  expect_near(values_of((*g_out)[0]), {-1, 1, -1, 3});
  OneNodeModel gn_bad("GroupNormalization", 21,
                      {{"x", float_tensor({1, 3, 1}, {1, 2, 3})},
                       {"scale", float_tensor({3}, {1, 1, 1})},
                       {"bias", float_tensor({3}, {0, 0, 0})}},
                      {{"y", TensorProto::FLOAT}});
  gn_bad.attr("num_groups", int64_t{2});
  expect_refused(gn_bad, "GroupNormalization", "divide");
}

TEST(RecentOpsTest, Col2ImSumsOverlappingBlocks) {
  // A 1x3 image from two 1x2 blocks at stride 1: the middle pixel gets both.
  OneNodeModel g("Col2Im", 18,
                 {{"x", float_tensor({1, 2, 2}, {1, 2, 10, 20})}, {"image", int64s({2}, {1, 3})}, {"block", int64s({2}, {1, 2})}},
                 {{"y", TensorProto::FLOAT}});
  auto out = g.run();
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ((*out)[0].dims(), (Dims{1, 1, 1, 3}));
  expect_near(values_of((*out)[0]), {1, 12, 20});
  OneNodeModel wrong_count("Col2Im", 18,
                           {{"x", float_tensor({1, 2, 3}, std::vector<float>(6, 1))}, {"image", int64s({2}, {1, 3})},
                            {"block", int64s({2}, {1, 2})}},
                           {{"y", TensorProto::FLOAT}});
  expect_refused(wrong_count, "Col2Im", "number of block positions");
  OneNodeModel huge("Col2Im", 18,
                    {{"x", float_tensor({1, 2, 1}, {1, 2})},
                     {"image", int64s({2}, {std::numeric_limits<int64_t>::max(), 3})},
                     {"block", int64s({2}, {1, 2})}},
                    {{"y", TensorProto::FLOAT}});
  EXPECT_FALSE(huge.run().has_value());
}

TEST(RecentOpsTest, CenterCropPadCropsAndPadsAroundTheCentre) {
  OneNodeModel g("CenterCropPad", 18, {{"x", float_tensor({1, 5}, {1, 2, 3, 4, 5})}, {"shape", int64s({2}, {3, 2})}},
                 {{"y", TensorProto::FLOAT}});
  auto out = g.run();
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ((*out)[0].dims(), (Dims{3, 2}));
  expect_near(values_of((*out)[0]), {0, 0, 2, 3, 0, 0});
  OneNodeModel bad("CenterCropPad", 18, {{"x", float_tensor({1, 5}, {1, 2, 3, 4, 5})}, {"shape", int64s({1}, {3})}},
                   {{"y", TensorProto::FLOAT}});
  expect_refused(bad, "CenterCropPad", "1 values for 2 axes");
}

TEST(RecentOpsTest, AffineGridMapsTheBaseGrid) {
  // The identity transform gives the base grid: cell centres of a 1x2 image.
  OneNodeModel g("AffineGrid", 20, {{"theta", float_tensor({1, 2, 3}, {1, 0, 0, 0, 1, 0})}, {"size", int64s({4}, {1, 1, 1, 2})}},
                 {{"grid", TensorProto::FLOAT}});
  auto out = g.run();
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ((*out)[0].dims(), (Dims{1, 1, 2, 2}));
  expect_near(values_of((*out)[0]), {-0.5f, 0.f, 0.5f, 0.f});
  OneNodeModel bad("AffineGrid", 20, {{"theta", float_tensor({1, 2, 3}, {1, 0, 0, 0, 1, 0})}, {"size", int64s({5}, {1, 1, 1, 2, 2})}},
                   {{"grid", TensorProto::FLOAT}});
  expect_refused(bad, "AffineGrid", "theta must be");
}

TEST(RecentOpsTest, TensorScatterWritesLinearlyOrCircularly) {
  // Cache [2 batches, 3 positions, 1]; one update per batch.
  for (const std::string mode : {"linear", "circular"}) {
    OneNodeModel g("TensorScatter", 24,
                   {{"past", float_tensor({2, 3, 1}, {1, 2, 3, 4, 5, 6})},
                    {"update", float_tensor({2, 1, 1}, {10, 20})},
                    {"idx", int64s({2}, {mode == "linear" ? 1 : 0, 2})}},
                   {{"present", TensorProto::FLOAT}});
    g.attr("mode", mode);
    auto out = g.run();
    ASSERT_TRUE(out.has_value()) << out.status().message();
    expect_near(values_of((*out)[0]), mode == "linear" ? std::vector<float>{1, 10, 3, 4, 5, 20}
                                                       : std::vector<float>{10, 2, 3, 4, 5, 20});
  }
  OneNodeModel overflow("TensorScatter", 24,
                        {{"past", float_tensor({1, 3, 1}, {1, 2, 3})},
                         {"update", float_tensor({1, 2, 1}, {10, 20})},
                         {"idx", int64s({1}, {2})}},
                        {{"present", TensorProto::FLOAT}});
  expect_refused(overflow, "TensorScatter", "does not fit");
  OneNodeModel shape("TensorScatter", 24,
                     {{"past", float_tensor({1, 3, 1}, {1, 2, 3})}, {"update", float_tensor({1, 1, 2}, {10, 20})}},
                     {{"present", TensorProto::FLOAT}});
  expect_refused(shape, "TensorScatter", "must match past_cache");
}

}  // namespace
}  // namespace loom
