// DeformConv on the reference EP: zero offsets are a plain convolution, an
// integer offset shifts the taps, a half-pixel offset interpolates, and
// inconsistent shapes are refused naming the op and the node.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "unit/reference/one_node_model.h"

namespace loom {
namespace {

using ::onnx::TensorProto;
using testing::float_tensor;
using testing::OneNodeModel;
using testing::values_of;

const std::vector<float> kX = {1, 2, 3, 4, 5, 6, 7, 8, 9};  // [1, 1, 3, 3]

std::vector<float> run_1x1(float dy, float dx) {
  // A 1x1 kernel of weight 1 over the 3x3 image: the output samples X at
  // (i + dy, j + dx).
  std::vector<float> offset;
  for (float v : {dy, dx})
    for (int k = 0; k < 9; ++k) offset.push_back(v);
  OneNodeModel g("DeformConv", 22,
                 {{"x", float_tensor({1, 1, 3, 3}, kX)}, {"w", float_tensor({1, 1, 1, 1}, {1})},
                  {"offset", float_tensor({1, 2, 3, 3}, offset)}},
                 {{"y", TensorProto::FLOAT}});
  auto out = g.run();
  EXPECT_TRUE(out.has_value()) << out.status().message();
  return out.has_value() ? values_of((*out)[0]) : std::vector<float>{};
}

TEST(DeformConvTest, OffsetsMoveAndInterpolateTheTaps) {
  EXPECT_EQ(run_1x1(0, 0), kX);
  EXPECT_EQ(run_1x1(0, 1), (std::vector<float>{2, 3, 0, 5, 6, 0, 8, 9, 0}));  // past the edge reads zero
  const std::vector<float> half = run_1x1(0.5f, 0);
  EXPECT_FLOAT_EQ(half[0], 2.5f);  // between 1 and 4
  EXPECT_FLOAT_EQ(half[6], 3.5f);  // between 7 and the zero below
}

TEST(DeformConvTest, MaskAndBiasApplyPerTap) {
  // 2x2 kernel of ones over the top-left 2x2 window, mask keeping taps 0 and 3.
  OneNodeModel g("DeformConv", 22,
                 {{"x", float_tensor({1, 1, 3, 3}, kX)},
                  {"w", float_tensor({1, 1, 2, 2}, {1, 1, 1, 1})},
                  {"offset", float_tensor({1, 8, 1, 1}, std::vector<float>(8, 0))},
                  {"b", float_tensor({1}, {100})},
                  {"mask", float_tensor({1, 4, 1, 1}, {1, 0, 0, 1})}},
                 {{"y", TensorProto::FLOAT}});
  g.attr("strides", std::vector<int64_t>{2, 2});
  auto out = g.run();
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ(values_of((*out)[0]), (std::vector<float>{100 + 1 + 5}));
}

TEST(DeformConvTest, NearMissesAreRefused) {
  auto refused = [](OneNodeModel& g, const std::string& words) {
    auto out = g.run();
    ASSERT_FALSE(out.has_value()) << words;
    EXPECT_NE(out.status().message().find("DeformConv"), std::string::npos) << out.status().message();
    EXPECT_NE(out.status().message().find("under_test"), std::string::npos) << out.status().message();
    EXPECT_NE(out.status().message().find(words), std::string::npos) << out.status().message();
  };
  OneNodeModel wrong_offset("DeformConv", 22,
                            {{"x", float_tensor({1, 1, 3, 3}, kX)}, {"w", float_tensor({1, 1, 1, 1}, {1})},
                             {"offset", float_tensor({1, 2, 2, 2}, std::vector<float>(8, 0))}},
                            {{"y", TensorProto::FLOAT}});
  refused(wrong_offset, "not the output size");
  OneNodeModel channels("DeformConv", 22,
                        {{"x", float_tensor({1, 1, 3, 3}, kX)}, {"w", float_tensor({1, 2, 1, 1}, {1, 1})},
                         {"offset", float_tensor({1, 2, 3, 3}, std::vector<float>(18, 0))}},
                        {{"y", TensorProto::FLOAT}});
  refused(channels, "channels inconsistent");
  OneNodeModel mask("DeformConv", 22,
                    {{"x", float_tensor({1, 1, 3, 3}, kX)}, {"w", float_tensor({1, 1, 1, 1}, {1})},
                     {"offset", float_tensor({1, 2, 3, 3}, std::vector<float>(18, 0))}, {"", Tensor()},
                     {"mask", float_tensor({1, 2, 3, 3}, std::vector<float>(18, 1))}},
                    {{"y", TensorProto::FLOAT}});
  refused(mask, "mask must be");
}

}  // namespace
}  // namespace loom
