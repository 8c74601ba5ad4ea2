// numpy's bin edges and arange reproduced to the bit; the expected values
// were printed by numpy 1.24 (np.histogram(..., 7, range=(f32(-1.3),
// f32(1.3)))[1] and np.arange(f32(3.7183520793914795), f32(5.526642322540283),
// f32(0.005533253774046898)), which returns float64).
#include <gtest/gtest.h>

#include <vector>

#include "quantization/numpy_histogram.h"

namespace loom::quant {
namespace {

TEST(NumpyHistogramCalibrationTest, EqualWidthEdgesMatchNumpy) {
  const auto e = equal_width_edges(-1.3f, 1.3f, 7);
  const std::vector<float> expected = {-1.2999999523162842f, -0.9285714030265808f, -0.5571428537368774f,
                                       -0.18571427464485168f, 0.18571427464485168f, 0.5571428537368774f,
                                       0.9285714030265808f,   1.2999999523162842f};
  EXPECT_EQ(e, expected);
  // An empty range widens by 0.5 on each side.
  const auto z = equal_width_edges(0.0, 0.0, 2);
  EXPECT_EQ(z, (std::vector<float>{-0.5f, 0.0f, 0.5f}));
}

TEST(NumpyHistogramCalibrationTest, Float32ArangeMatchesNumpy) {
  const auto a = float32_arange(3.7183520793914795f, 5.526642322540283f, 0.005533253774046898f);
  ASSERT_EQ(a.size(), 327u);
  // Element 51 is where float32 arithmetic would give 4.000546455383301.
  EXPECT_EQ(a[51], 4.000546216964722);
  EXPECT_EQ(a.back(), 5.522181272506714);
  EXPECT_TRUE(float32_arange(2.0f, 1.0f, 0.5f).empty());
}

TEST(NumpyHistogramCalibrationTest, CountsLikeNumpy) {
  const std::vector<double> edges = {0.0, 1.0, 2.0, 3.0};
  std::vector<int64_t> counts(3, 0);
  const std::vector<float> values = {-0.5f, 0.0f, 0.999f, 1.0f, 2.5f, 3.0f, 3.5f};
  count_into_bins(edges, values, counts);
  // Left edges inclusive, the last bin also its right edge, outside ignored.
  EXPECT_EQ(counts, (std::vector<int64_t>{2, 1, 2}));
}

}  // namespace
}  // namespace loom::quant
