// Newer versions of ops Loom already ran: DFT-20 (axis as an input; the
// inverse real transform), Range-27 on 16-bit floats, ReduceMax/Min-20 on
// bool, OptionalHasElement-18 with its input absent, blocked and 16-bit
// QuantizeLinear / DequantizeLinear-21.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "unit/reference/one_node_model.h"

namespace loom {
namespace {

using ::onnx::TensorProto;
using testing::float_tensor;
using testing::OneNodeModel;
using testing::values_of;

Tensor int64_scalar(int64_t v) { return Tensor::from_vector(DType::kInt64, {}, std::vector<int64_t>{v}); }

TEST(NewerVersionsTest, Dft20TakesItsAxisAsAnInput) {
  // Two signals of length 4 along axis 0 (batch) of [4, 2, 1]: a constant
  // 1 and an impulse.
  const std::vector<float> x = {1, 1, 1, 0, 1, 0, 1, 0};
  OneNodeModel g("DFT", 20, {{"x", float_tensor({4, 2, 1}, x)}, {"", Tensor()}, {"axis", int64_scalar(0)}},
                 {{"y", TensorProto::FLOAT}});
  auto out = g.run();
  ASSERT_TRUE(out.has_value()) << out.status().message();
  ASSERT_EQ((*out)[0].dims(), (Dims{4, 2, 2}));
  const std::vector<float> y = values_of((*out)[0]);
  for (int k = 0; k < 4; ++k) {
    EXPECT_NEAR(y[(k * 2 + 0) * 2], k == 0 ? 4.f : 0.f, 1e-6f) << "constant, bin " << k;
    EXPECT_NEAR(y[(k * 2 + 1) * 2], 1.f, 1e-6f) << "impulse, bin " << k;
  }
  OneNodeModel bad("DFT", 20, {{"x", float_tensor({4, 2, 1}, x)}, {"", Tensor()}, {"axis", int64_scalar(2)}},
                   {{"y", TensorProto::FLOAT}});
  auto refused = bad.run();
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.status().message().find("axis 2 out of range"), std::string::npos) << refused.status().message();
}

TEST(NewerVersionsTest, DftInverseOnesidedIsTheInverseRealTransform) {
  // The one-sided spectrum of [1, 2, 3, 4] (bins 0..2) back to the signal.
  const std::vector<float> spectrum = {10, 0, -2, 2, -2, 0};
  for (int64_t opset : {17, 20}) {
    OneNodeModel g("DFT", opset, {{"x", float_tensor({1, 3, 2}, spectrum)}}, {{"y", TensorProto::FLOAT}});
    g.attr("inverse", int64_t{1}).attr("onesided", int64_t{1});
    if (opset == 17) g.attr("axis", int64_t{1});
    auto out = g.run();
    ASSERT_TRUE(out.has_value()) << out.status().message();
    ASSERT_EQ((*out)[0].dims(), (Dims{1, 4, 1})) << "opset " << opset;
    const std::vector<float> y = values_of((*out)[0]);
    for (int i = 0; i < 4; ++i) EXPECT_NEAR(y[i], i + 1.f, 1e-5f);
  }
}

TEST(NewerVersionsTest, RangeOnHalfPrecision) {
  const Tensor start = Tensor::from_vector(DType::kFloat16, {}, std::vector<uint16_t>{0x3C00});  // 1.0
  const Tensor limit = Tensor::from_vector(DType::kFloat16, {}, std::vector<uint16_t>{0x4400});  // 4.0
  const Tensor delta = Tensor::from_vector(DType::kFloat16, {}, std::vector<uint16_t>{0x3800});  // 0.5
  OneNodeModel g("Range", 27, {{"s", start}, {"l", limit}, {"d", delta}}, {{"y", TensorProto::FLOAT16}});
  auto out = g.run();
  ASSERT_TRUE(out.has_value()) << out.status().message();
  ASSERT_EQ((*out)[0].dims(), (Dims{6}));
  const uint16_t* y = (*out)[0].data_as<uint16_t>();
  EXPECT_EQ(y[0], 0x3C00);  // 1.0
  EXPECT_EQ(y[5], 0x4300);  // 3.5
}

TEST(NewerVersionsTest, ReduceMaxAndMinOnBoolAreAnyAndAll) {
  const Tensor x = Tensor::from_vector(DType::kBool, {2, 2}, std::vector<uint8_t>{1, 0, 0, 0});
  const Tensor axes = Tensor::from_vector(DType::kInt64, {1}, std::vector<int64_t>{1});
  for (const std::string op : {"ReduceMax", "ReduceMin"}) {
    OneNodeModel g(op, 20, {{"x", x}, {"axes", axes}}, {{"y", TensorProto::BOOL}});
    g.attr("keepdims", int64_t{0});
    auto out = g.run();
    ASSERT_TRUE(out.has_value()) << out.status().message();
    const bool* y = (*out)[0].data_as<bool>();
    EXPECT_EQ(y[0], op == "ReduceMax");
    EXPECT_FALSE(y[1]);
  }
  OneNodeModel sum("ReduceSum", 20, {{"x", x}, {"axes", axes}}, {{"y", TensorProto::BOOL}});
  EXPECT_FALSE(sum.run().has_value());  // bool stays limited to max and min
}

TEST(NewerVersionsTest, OptionalHasElementWithoutInputIsFalse) {
  OneNodeModel g("OptionalHasElement", 18, {{"", Tensor()}}, {{"y", TensorProto::BOOL}});
  auto out = g.run();
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_FALSE((*out)[0].data_as<bool>()[0]);
  OneNodeModel old("OptionalHasElement", 17, {{"", Tensor()}}, {{"y", TensorProto::BOOL}});
  EXPECT_FALSE(old.run().has_value());  // opset 15-17 requires the input
}

TEST(NewerVersionsTest, BlockedQuantizationUsesOneScalePerBlock) {
  // x [2, 4] in blocks of 2 along axis 1: scales [2, 2].
  const std::vector<float> x = {1, 2, 30, 40, -1, -2, 3, 4};
  const std::vector<float> scales = {1, 10, 0.5f, 2};
  OneNodeModel q("QuantizeLinear", 21, {{"x", float_tensor({2, 4}, x)}, {"s", float_tensor({2, 2}, scales)}},
                 {{"y", TensorProto::INT16}});
  q.attr("axis", int64_t{1}).attr("block_size", int64_t{2}).attr("output_dtype", int64_t{TensorProto::INT16});
  auto out = q.run();
  ASSERT_TRUE(out.has_value()) << out.status().message();
  const int16_t* y = (*out)[0].data_as<int16_t>();
  EXPECT_EQ(std::vector<int16_t>(y, y + 8), (std::vector<int16_t>{1, 2, 3, 4, -2, -4, 2, 2}));
  OneNodeModel dq("DequantizeLinear", 21,
                  {{"x", (*out)[0]}, {"s", float_tensor({2, 2}, scales)}}, {{"y", TensorProto::FLOAT}});
  dq.attr("axis", int64_t{1}).attr("block_size", int64_t{2});
  auto back = dq.run();
  ASSERT_TRUE(back.has_value()) << back.status().message();
  EXPECT_EQ(values_of((*back)[0]), (std::vector<float>{1, 2, 30, 40, -1, -2, 4, 4}));
  OneNodeModel bad("QuantizeLinear", 21, {{"x", float_tensor({2, 4}, x)}, {"s", float_tensor({2, 3}, {1, 1, 1, 1, 1, 1})}},
                   {{"y", TensorProto::UINT8}});
  bad.attr("block_size", int64_t{2});
  auto refused = bad.run();
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.status().message().find("divided into blocks"), std::string::npos) << refused.status().message();
}

TEST(NewerVersionsTest, SixteenBitQuantizationSaturates) {
  OneNodeModel q("QuantizeLinear", 21,
                 {{"x", float_tensor({3}, {-1e9f, 1.5f, 1e9f})},
                  {"s", float_tensor({}, {1})},
                  {"z", Tensor::from_vector(DType::kUint16, {}, std::vector<uint16_t>{100})}},
                 {{"y", TensorProto::UINT16}});
  auto out = q.run();
  ASSERT_TRUE(out.has_value()) << out.status().message();
  const uint16_t* y = (*out)[0].data_as<uint16_t>();
  EXPECT_EQ(std::vector<uint16_t>(y, y + 3), (std::vector<uint16_t>{0, 102, 65535}));  // 1.5 rounds to even
}

}  // namespace
}  // namespace loom
