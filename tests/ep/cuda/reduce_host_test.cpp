// The reduction family's index arithmetic (kernels/reduce_plan.h), run on
// the CPU against naive loops: axis normalisation, the (kept, reduced) maps
// of a reduction and their merging, rows along an axis, TopK's rank order,
// its bitonic network and its radix keys. No GPU needed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "kernels/reduce_plan.h"

namespace loom {
namespace {

using cuda::AxisRows;
using cuda::ReducePlan;

// Row-major multi-index of `linear` in `dims`.
std::vector<int64_t> unravel(int64_t linear, const std::vector<int64_t>& dims) {
  std::vector<int64_t> idx(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    idx[d] = linear % dims[d];
    linear /= dims[d];
  }
  return idx;
}

TEST(CudaReducePlan, ReducedDimsNormaliseAndReject) {
  EXPECT_EQ(cuda::reduced_dims({-1, 0}, 3, false), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(cuda::reduced_dims({}, 3, false), (std::vector<bool>{true, true, true}));
  EXPECT_EQ(cuda::reduced_dims({}, 3, true), (std::vector<bool>{false, false, false}));
  EXPECT_EQ(cuda::reduced_dims({1}, 3, true), (std::vector<bool>{false, true, false}));
  EXPECT_THROW(cuda::reduced_dims({3}, 3, false), std::invalid_argument);
  EXPECT_THROW(cuda::reduced_dims({-4}, 3, false), std::invalid_argument);
  EXPECT_THROW(cuda::reduced_dims({1, -2}, 3, false), std::invalid_argument);
}

// Every (output, j) of the plan is the input element a naive enumeration
// assigns: output = row-major index over kept dims, j = over reduced dims.
void expect_plan_matches_naive(const std::vector<int64_t>& in, const std::vector<bool>& reduced, bool keepdims) {
  const ReducePlan p = cuda::plan_reduce(in, reduced, keepdims);
  std::vector<int64_t> kept_dims, red_dims, out_dims;
  for (size_t d = 0; d < in.size(); ++d) {
    (reduced[d] ? red_dims : kept_dims).push_back(in[d]);
    if (!reduced[d]) out_dims.push_back(in[d]);
    else if (keepdims) out_dims.push_back(1);
  }
  EXPECT_EQ(p.out_dims, out_dims);
  int64_t outputs = 1, count = 1, total = 1;
  for (int64_t d : kept_dims) outputs *= d;
  for (int64_t d : red_dims) count *= d;
  for (int64_t d : in) total *= d;
  ASSERT_EQ(p.maps.outputs, outputs);
  ASSERT_EQ(p.maps.count, count);
  std::vector<int64_t> seen(static_cast<size_t>(total), 0);
  for (int64_t i = 0; i < total; ++i) {
    const std::vector<int64_t> idx = unravel(i, in);
    int64_t o = 0, j = 0;
    for (size_t d = 0; d < in.size(); ++d) {
      if (reduced[d]) j = j * in[d] + idx[d];
      else o = o * in[d] + idx[d];
    }
    ASSERT_EQ(p.maps.element(o, j), i) << "output " << o << " element " << j;
    ++seen[static_cast<size_t>(i)];
  }
  for (int64_t s : seen) EXPECT_EQ(s, 1);
}

TEST(CudaReducePlan, MapsMatchNaiveEnumeration) {
  const std::vector<int64_t> shape = {3, 4, 5, 2};
  for (int mask = 0; mask < 16; ++mask) {
    std::vector<bool> reduced(4);
    for (int d = 0; d < 4; ++d) reduced[static_cast<size_t>(d)] = (mask >> d) & 1;
    for (bool keep : {false, true}) expect_plan_matches_naive(shape, reduced, keep);
  }
  // Size-1 dims, odd sizes, rank 0 and 1.
  expect_plan_matches_naive({1, 7, 1, 3}, {true, false, true, true}, true);
  expect_plan_matches_naive({2, 1, 3}, {false, true, false}, false);
  expect_plan_matches_naive({}, {}, false);
  expect_plan_matches_naive({9}, {true}, false);
  expect_plan_matches_naive({9}, {false}, true);
}

TEST(CudaReducePlan, MergesContiguousDims) {
  // The last two axes: one contiguous run per output.
  ReducePlan p = cuda::plan_reduce({3, 37, 129}, {false, true, true}, false);
  EXPECT_TRUE(p.maps.contiguous());
  EXPECT_EQ(p.maps.reduced.rank, 1);
  EXPECT_EQ(p.maps.count, 37 * 129);
  // Everything: one output, one run.
  p = cuda::plan_reduce({3, 37, 129}, {true, true, true}, true);
  EXPECT_TRUE(p.maps.contiguous());
  EXPECT_EQ(p.maps.kept.rank, 0);
  EXPECT_EQ(p.out_dims, (std::vector<int64_t>{1, 1, 1}));
  // The first axis: strided, outputs contiguous.
  p = cuda::plan_reduce({3, 37, 129}, {true, false, false}, false);
  EXPECT_FALSE(p.maps.contiguous());
  EXPECT_EQ(p.maps.kept.rank, 1);
  EXPECT_EQ(p.maps.reduced.strides[0], 37 * 129);
  // Reduced dims split by a kept one stay two.
  p = cuda::plan_reduce({3, 37, 129}, {true, false, true}, false);
  EXPECT_EQ(p.maps.reduced.rank, 2);
  // A size-1 dim between reduced dims does not split them.
  p = cuda::plan_reduce({4, 1, 6}, {true, false, true}, true);
  EXPECT_TRUE(p.maps.contiguous());
  EXPECT_EQ(p.out_dims, (std::vector<int64_t>{1, 1, 1}));
}

TEST(CudaReducePlan, EmptyReductionsAndOutputs) {
  ReducePlan p = cuda::plan_reduce({3, 0, 5}, {false, true, false}, true);
  EXPECT_EQ(p.maps.outputs, 15);
  EXPECT_EQ(p.maps.count, 0);
  EXPECT_EQ(p.out_dims, (std::vector<int64_t>{3, 1, 5}));
  p = cuda::plan_reduce({0, 5}, {false, true}, false);
  EXPECT_EQ(p.maps.outputs, 0);
  EXPECT_EQ(p.out_dims, (std::vector<int64_t>{0}));
  // No reduced dim (noop_with_empty_axes): each output reads its element.
  p = cuda::plan_reduce({2, 3}, {false, false}, true);
  EXPECT_EQ(p.maps.count, 1);
  for (int64_t o = 0; o < 6; ++o) EXPECT_EQ(p.maps.element(o, 0), o);
}

TEST(CudaReducePlan, TooManyStridesAfterMergingIsRejected) {
  std::vector<int64_t> in(18, 2);
  std::vector<bool> reduced(18);
  for (size_t d = 0; d < 18; ++d) reduced[d] = d % 2 == 0;
  EXPECT_THROW(cuda::plan_reduce(in, reduced, false), std::invalid_argument);
}

TEST(CudaReducePlan, AxisRowsMatchNaiveIndexing) {
  const std::vector<int64_t> dims = {3, 5, 7};
  for (int64_t axis = 0; axis < 3; ++axis) {
    const AxisRows a = cuda::axis_rows(dims, axis);
    EXPECT_EQ(a.rows() * a.n, 105);
    std::vector<int> seen(105, 0);
    for (int64_t r = 0; r < a.rows(); ++r)
      for (int64_t k = 0; k < a.n; ++k) {
        const int64_t at = a.at(r, k);
        ASSERT_GE(at, 0);
        ASSERT_LT(at, 105);
        const std::vector<int64_t> idx = unravel(at, dims);
        EXPECT_EQ(idx[static_cast<size_t>(axis)], k);
        ++seen[static_cast<size_t>(at)];
      }
    for (int s : seen) EXPECT_EQ(s, 1);
  }
  const AxisRows c = cuda::coerced_rows(dims, 1);
  EXPECT_EQ(c.outer, 3);
  EXPECT_EQ(c.n, 35);
  EXPECT_EQ(c.inner, 1);
  const AxisRows all = cuda::coerced_rows(dims, 3);
  EXPECT_EQ(all.outer, 105);
  EXPECT_EQ(all.n, 1);
  EXPECT_EQ(cuda::axis_output_dims(dims, 1, true), (std::vector<int64_t>{3, 1, 7}));
  EXPECT_EQ(cuda::axis_output_dims(dims, 1, false), (std::vector<int64_t>{3, 7}));
}

// The reference's TopK order (plugins/reference reduction_softmax.cpp).
bool reference_before(float va, int64_t a, float vb, int64_t b, bool largest) {
  const bool na = std::isnan(va), nb = std::isnan(vb);
  if (na || nb) {
    if (na && nb) return a < b;
    return largest ? na : nb;
  }
  if (va != vb) return largest ? va > vb : va < vb;
  return a < b;
}

std::vector<float> tricky_row(size_t n, uint32_t seed) {
  std::mt19937 g(seed);
  std::uniform_int_distribution<int> d(-4, 4);
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(d(g)) * 0.5f;  // many ties
  const float nan = std::numeric_limits<float>::quiet_NaN();
  if (n > 3) v[n / 3] = nan, v[n - 1] = nan;
  if (n > 5) v[2] = -0.0f, v[4] = 0.0f, v[1] = std::numeric_limits<float>::infinity();
  return v;
}

std::vector<int64_t> reference_order(const std::vector<float>& v, bool largest) {
  std::vector<int64_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return reference_before(v[static_cast<size_t>(a)], a, v[static_cast<size_t>(b)], b, largest);
  });
  return order;
}

// The bitonic network of topk.cu, run serially.
std::vector<int64_t> bitonic_order(const std::vector<float>& v, bool largest) {
  const int64_t n = static_cast<int64_t>(v.size()), padded = cuda::next_pow2(n);
  std::vector<float> keys(static_cast<size_t>(padded), 0.f);
  std::vector<int64_t> idx(static_cast<size_t>(padded));
  for (int64_t t = 0; t < padded; ++t) {
    idx[static_cast<size_t>(t)] = t;
    if (t < n) keys[static_cast<size_t>(t)] = v[static_cast<size_t>(t)];
  }
  for (int64_t size = 2; size <= padded; size <<= 1)
    for (int64_t stride = size / 2; stride > 0; stride >>= 1)
      for (int64_t t = 0; t < padded / 2; ++t) {
        const size_t i = static_cast<size_t>(cuda::bitonic_first(t, stride)), j = i + static_cast<size_t>(stride);
        if (cuda::topk_before(keys[j], idx[j], keys[i], idx[i], largest, n) ==
            cuda::bitonic_ascending(static_cast<int64_t>(i), size)) {
          std::swap(keys[i], keys[j]);
          std::swap(idx[i], idx[j]);
        }
      }
  idx.resize(static_cast<size_t>(n));
  return idx;
}

TEST(CudaTopkOrder, BitonicNetworkSortsAsTheReference) {
  for (size_t n : {1u, 2u, 3u, 7u, 33u, 129u, 1000u, 2048u})
    for (bool largest : {false, true}) {
      const std::vector<float> v = tricky_row(n, static_cast<uint32_t>(n));
      EXPECT_EQ(bitonic_order(v, largest), reference_order(v, largest)) << "n " << n << " largest " << largest;
    }
}

uint32_t float_key(float f, bool largest) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return cuda::topk_key32(cuda::ordered_float_bits(bits), largest);
}

TEST(CudaTopkOrder, RadixKeysStableSortAsTheReference) {
  for (bool largest : {false, true}) {
    std::vector<float> v = tricky_row(3001, 5);
    v[7] = -std::numeric_limits<float>::infinity();
    v[8] = -std::numeric_limits<float>::quiet_NaN();  // a NaN with the sign bit set
    std::vector<int64_t> order(v.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return float_key(v[static_cast<size_t>(a)], largest) < float_key(v[static_cast<size_t>(b)], largest);
    });
    EXPECT_EQ(order, reference_order(v, largest)) << "largest " << largest;
  }
}

TEST(CudaTopkOrder, IntegerAndDoubleKeysKeepOrder) {
  const std::vector<int64_t> ints = {std::numeric_limits<int64_t>::min(), -5, -1, 0, 1, 7,
                                     std::numeric_limits<int64_t>::max()};
  for (size_t i = 1; i < ints.size(); ++i)
    EXPECT_LT(cuda::ordered_int64_bits(ints[i - 1]), cuda::ordered_int64_bits(ints[i]));
  const std::vector<int32_t> ints32 = {std::numeric_limits<int32_t>::min(), -5, -1, 0, 1, 7,
                                       std::numeric_limits<int32_t>::max()};
  for (size_t i = 1; i < ints32.size(); ++i)
    EXPECT_LT(cuda::ordered_int32_bits(ints32[i - 1]), cuda::ordered_int32_bits(ints32[i]));
  const std::vector<double> ds = {-std::numeric_limits<double>::infinity(), -1e300, -2.5, -1e-300, 0.0, 1e-300, 3.0,
                                  std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()};
  auto key = [](double d) {
    uint64_t b;
    std::memcpy(&b, &d, 8);
    return cuda::ordered_double_bits(b);
  };
  for (size_t i = 1; i < ds.size(); ++i) EXPECT_LT(key(ds[i - 1]), key(ds[i])) << i;
  EXPECT_EQ(key(-0.0), key(0.0));
  EXPECT_EQ(cuda::next_pow2(1), 1);
  EXPECT_EQ(cuda::next_pow2(129), 256);
  EXPECT_EQ(cuda::next_pow2(2048), 2048);
}

}  // namespace
}  // namespace loom
