// Host-side checks of the CUDA EP's index arithmetic (kernels/index_math.h),
// run on the CPU in CI: the device kernels call the same functions.
#include <gtest/gtest.h>

#include <stdexcept>

#include "kernels/index_math.h"

namespace loom::cuda {
namespace {

// The offset of output element `linear` in an input of dims `in`
// broadcast to `out`, by the definition (unravel, clamp broadcast dims,
// ravel).
int64_t naive_offset(const std::vector<int64_t>& out, const std::vector<int64_t>& in, int64_t linear) {
  std::vector<int64_t> index(out.size());
  for (size_t d = out.size(); d-- > 0;) {
    index[d] = linear % out[d];
    linear /= out[d];
  }
  int64_t off = 0;
  const size_t shift = out.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d) off = off * in[d] + (in[d] == 1 ? 0 : index[d + shift]);
  return off;
}

TEST(CudaIndexMath, BroadcastMapMatchesDefinition) {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{4, 33, 17}, {17}},           {{4, 33, 17}, {1}},           {{4, 33, 17}, {4, 1, 17}},
      {{4, 33, 17}, {1, 33, 1}},     {{2, 3, 33, 7}, {33, 1}},     {{2, 4, 3, 6, 5}, {2, 1, 3, 1, 5}},
      {{1, 1, 5}, {5}},              {{2, 3, 4}, {2, 3, 4}},       {{3, 1, 4, 1, 2, 1, 2, 1, 2}, {1, 1, 4, 1, 1, 1, 2, 1, 1}}};
  for (const auto& [out, in] : cases) {
    const StridedMap m = broadcast_map(out, in);
    int64_t n = 1;
    for (int64_t d : out) n *= d;
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(m.offset(i), naive_offset(out, in, i)) << "element " << i;
  }
}

TEST(CudaIndexMath, BroadcastMapMergesContiguousDims) {
  EXPECT_EQ(broadcast_map({4, 33, 17}, {4, 33, 17}).rank, 1);  // one contiguous run
  EXPECT_EQ(broadcast_map({4, 33, 17}, {17}).rank, 2);         // broadcast rows, contiguous columns
  EXPECT_EQ(broadcast_map({4, 33, 17}, {1}).rank, 1);          // all broadcast
  EXPECT_EQ(broadcast_map({1, 1, 5}, {5}).rank, 1);            // size-1 dims dropped
}

TEST(CudaIndexMath, BroadcastShape) {
  EXPECT_EQ(broadcast_shape({4, 1, 17}, {33, 1}), (std::vector<int64_t>{4, 33, 17}));
  EXPECT_EQ(broadcast_shape({}, {3}), (std::vector<int64_t>{3}));
  EXPECT_EQ(broadcast_shape({0, 1}, {1, 5}), (std::vector<int64_t>{0, 5}));
  EXPECT_THROW(broadcast_shape({4, 3}, {2, 3}), std::invalid_argument);
}

TEST(CudaIndexMath, TooManyDimsAfterMergingIsAnError) {
  // Alternating broadcast dims cannot merge: 9 dims stay 9.
  const std::vector<int64_t> out = {2, 3, 2, 3, 2, 3, 2, 3, 2};
  const std::vector<int64_t> in = {2, 1, 2, 1, 2, 1, 2, 1, 2};
  EXPECT_THROW(broadcast_map(out, in), std::invalid_argument);
}

TEST(CudaIndexMath, SameElements) {
  EXPECT_TRUE(same_elements({4, 33}, {4, 33}));
  EXPECT_TRUE(same_elements({1, 4, 33}, {4, 33}));
  EXPECT_FALSE(same_elements({4, 33}, {33}));
}

}  // namespace
}  // namespace loom::cuda
