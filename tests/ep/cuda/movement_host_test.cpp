// The data-movement kernels' index arithmetic (kernels/movement_index.h),
// run on the CPU against naive loops: Slice normalisation, the Transpose /
// Tile / Pad maps and the gathers' addressing. No GPU needed. Resize's taps
// are in resize_host_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/movement_index.h"

namespace loom::cuda {
namespace {

using Dims = std::vector<int64_t>;

int64_t count_of(const Dims& d) {
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  return n;
}

// Multi-index of linear index i in `dims` (row major).
Dims unravel(int64_t i, const Dims& dims) {
  Dims idx(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    idx[d] = i % dims[d];
    i /= dims[d];
  }
  return idx;
}

int64_t ravel(const Dims& idx, const Dims& dims) {
  int64_t off = 0;
  for (size_t d = 0; d < dims.size(); ++d) off = off * dims[d] + idx[d];
  return off;
}

uint32_t next(uint32_t& s) {
  s = s * 1664525u + 1013904223u;
  return s >> 8;
}

// --- Slice ---

// The ONNX spec's rule, walked element by element: negative starts / ends
// count from the back, then clamp to [0, dim] (step > 0) or start to
// [0, dim - 1] and end to [-1, dim - 1] (step < 0).
SliceAxis naive_slice(int64_t start, int64_t end, int64_t step, int64_t dim) {
  SliceAxis r;
  if (dim == 0) return r;
  __int128 s = start, e = end;
  if (s < 0) s += dim;
  if (e < 0) e += dim;
  if (step > 0) {
    s = std::clamp<__int128>(s, 0, dim);
    e = std::clamp<__int128>(e, 0, dim);
  } else {
    s = std::clamp<__int128>(s, 0, dim - 1);
    e = std::clamp<__int128>(e, -1, dim - 1);
  }
  int64_t first = -1;
  for (__int128 i = s; step > 0 ? i < e : i > e; i += step) {
    if (first < 0) first = static_cast<int64_t>(i);
    ++r.count;
  }
  r.start = r.count > 0 ? first : 0;
  return r;
}

TEST(CudaMovementIndex, SliceAxisMatchesTheSpecWalk) {
  const int64_t big = std::numeric_limits<int64_t>::max(), small = std::numeric_limits<int64_t>::min();
  const std::vector<int64_t> bounds = {small, -100, -7, -6, -5, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 100, big};
  const std::vector<int64_t> steps = {small, -100, -7, -3, -2, -1, 1, 2, 3, 5, 100, big};
  for (int64_t dim : {0, 1, 2, 5, 6})
    for (int64_t s : bounds)
      for (int64_t e : bounds)
        for (int64_t step : steps) {
          const SliceAxis want = naive_slice(s, e, step, dim), got = slice_axis(s, e, step, dim);
          ASSERT_EQ(got.count, want.count) << dim << " " << s << " " << e << " " << step;
          ASSERT_EQ(got.start, want.start) << dim << " " << s << " " << e << " " << step;
        }
}

TEST(CudaMovementIndex, SliceAxisHandCases) {
  // x[1:4] of 5, x[-1::-1] of 5 (ends at INT64_MIN), x[4:0:-2] of 5.
  EXPECT_EQ(slice_axis(1, 4, 1, 5).count, 3);
  const SliceAxis rev = slice_axis(-1, std::numeric_limits<int64_t>::min(), -1, 5);
  EXPECT_EQ(rev.start, 4);
  EXPECT_EQ(rev.count, 5);
  const SliceAxis odd = slice_axis(4, 0, -2, 5);
  EXPECT_EQ(odd.start, 4);
  EXPECT_EQ(odd.count, 2);
  EXPECT_EQ(slice_axis(3, 3, 1, 5).count, 0);
}

// --- Transpose (permute_map + compact_map) ---

TEST(CudaMovementIndex, PermuteMapMatchesNaiveTranspose) {
  uint32_t seed = 7;
  for (int trial = 0; trial < 300; ++trial) {
    const size_t rank = 1 + next(seed) % 6;
    Dims in(rank);
    for (int64_t& d : in) d = 1 + next(seed) % 4;
    Dims perm(rank);
    for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<int64_t>(i);
    for (size_t i = rank; i-- > 1;) std::swap(perm[i], perm[next(seed) % (i + 1)]);
    Dims out(rank);
    for (size_t i = 0; i < rank; ++i) out[i] = in[static_cast<size_t>(perm[i])];
    const StridedMap full = permute_map(in, perm), compact = compact_map(full);
    ASSERT_LE(compact.rank, full.rank);
    for (int64_t o = 0; o < count_of(out); ++o) {
      const Dims oi = unravel(o, out);
      Dims ii(rank);
      for (size_t i = 0; i < rank; ++i) ii[static_cast<size_t>(perm[i])] = oi[i];
      const int64_t want = ravel(ii, in);
      ASSERT_EQ(full.offset(o), want);
      ASSERT_EQ(compact.offset(o), want);
    }
  }
}

TEST(CudaMovementIndex, CompactMapMergesAnIdentityIntoOneDim) {
  const StridedMap m = compact_map(permute_map({2, 1, 3, 4}, {0, 1, 2, 3}));
  EXPECT_EQ(m.rank, 1);
  EXPECT_EQ(m.dims[0], 24);
  EXPECT_EQ(m.strides[0], 1);
  // A broadcast (stride 0) run merges too; all-ones becomes rank 0.
  StridedMap b;
  b.rank = 3;
  b.dims[0] = 2, b.dims[1] = 3, b.dims[2] = 4;
  b.strides[0] = 0, b.strides[1] = 0, b.strides[2] = 1;
  const StridedMap c = compact_map(b);
  EXPECT_EQ(c.rank, 2);
  EXPECT_EQ(c.offset(23), 3);
  EXPECT_EQ(compact_map(permute_map({1, 1}, {1, 0})).rank, 0);
}

// --- Tile ---

TEST(CudaMovementIndex, TileMapMatchesNaive) {
  uint32_t seed = 11;
  for (int trial = 0; trial < 200; ++trial) {
    const size_t rank = 1 + next(seed) % 4;
    Dims in(rank), rep(rank), out(rank);
    TileMap m;
    m.rank = static_cast<int>(rank);
    for (size_t d = 0; d < rank; ++d) {
      in[d] = 1 + next(seed) % 4;
      rep[d] = 1 + next(seed) % 3;
      out[d] = in[d] * rep[d];
    }
    const Dims st = contiguous_strides(in);
    for (size_t d = 0; d < rank; ++d) {
      m.out_dims[d] = out[d];
      m.in_dims[d] = in[d];
      m.in_strides[d] = st[d];
    }
    for (int64_t o = 0; o < count_of(out); ++o) {
      Dims idx = unravel(o, out);
      for (size_t d = 0; d < rank; ++d) idx[d] -= (idx[d] / in[d]) * in[d];
      ASSERT_EQ(m.offset(o), ravel(idx, in));
    }
  }
}

// --- Pad ---

// Source index by walking: reflect bounces off the edges, wrap steps by n.
int64_t naive_pad_index(PadMode mode, int64_t i, int64_t n) {
  if (i >= 0 && i < n) return i;
  switch (mode) {
    case PadMode::kConstant: return -1;
    case PadMode::kEdge: return i < 0 ? 0 : n - 1;
    case PadMode::kWrap:
      while (i < 0) i += n;
      while (i >= n) i -= n;
      return i;
    case PadMode::kReflect:
      if (n == 1) return 0;
      while (i < 0 || i >= n) {
        if (i < 0) i = -i;
        if (i >= n) i = 2 * (n - 1) - i;
      }
      return i;
  }
  return -1;
}

TEST(CudaMovementIndex, PadSourceIndexMatchesWalking) {
  for (PadMode mode : {PadMode::kConstant, PadMode::kEdge, PadMode::kWrap, PadMode::kReflect})
    for (int64_t n = 1; n <= 5; ++n)
      for (int64_t i = -23; i <= 23; ++i)
        ASSERT_EQ(PadMap::source_index(mode, i, n), naive_pad_index(mode, i, n))
            << static_cast<int>(mode) << " " << i << " " << n;
  // numpy: np.pad([a, b, c], 3, 'reflect') = [b, c, b, a, b, c, b, a, b]
  EXPECT_EQ(PadMap::source_index(PadMode::kReflect, -1, 3), 1);
  EXPECT_EQ(PadMap::source_index(PadMode::kReflect, -2, 3), 2);
  EXPECT_EQ(PadMap::source_index(PadMode::kReflect, -3, 3), 1);
  EXPECT_EQ(PadMap::source_index(PadMode::kReflect, 3, 3), 1);
  EXPECT_EQ(PadMap::source_index(PadMode::kWrap, -1, 3), 2);
}

TEST(CudaMovementIndex, PadMapMatchesNaive) {
  uint32_t seed = 5;
  for (PadMode mode : {PadMode::kConstant, PadMode::kEdge, PadMode::kWrap, PadMode::kReflect})
    for (int trial = 0; trial < 60; ++trial) {
      const size_t rank = 1 + next(seed) % 3;
      Dims in(rank), begin(rank), out(rank);
      PadMap m;
      m.rank = static_cast<int>(rank);
      m.mode = mode;
      for (size_t d = 0; d < rank; ++d) {
        in[d] = 1 + next(seed) % 4;
        begin[d] = static_cast<int64_t>(next(seed) % 7) - 2;  // crops too
        const int64_t end = static_cast<int64_t>(next(seed) % 7) - 2;
        out[d] = std::max<int64_t>(0, in[d] + begin[d] + end);
      }
      const Dims in_st = contiguous_strides(in);
      for (size_t d = 0; d < rank; ++d) {
        m.out_dims[d] = out[d];
        m.in_dims[d] = in[d];
        m.in_strides[d] = in_st[d];
        m.begin[d] = begin[d];
      }
      for (int64_t o = 0; o < count_of(out); ++o) {
        const Dims oi = unravel(o, out);
        Dims ii(rank);
        bool constant = false;
        for (size_t d = 0; d < rank; ++d) {
          ii[d] = naive_pad_index(mode, oi[d] - begin[d], in[d]);
          constant = constant || ii[d] < 0;
        }
        ASSERT_EQ(m.offset(o), constant ? -1 : ravel(ii, in));
      }
    }
}

// --- gathers ---

TEST(CudaMovementIndex, GatherIndexWrapsAndRejects) {
  EXPECT_EQ(gather_index(0, 4), 0);
  EXPECT_EQ(gather_index(3, 4), 3);
  EXPECT_EQ(gather_index(-1, 4), 3);
  EXPECT_EQ(gather_index(-4, 4), 0);
  EXPECT_EQ(gather_index(4, 4), -1);
  EXPECT_EQ(gather_index(-5, 4), -1);
  EXPECT_EQ(gather_index(0, 0), -1);
}

TEST(CudaMovementIndex, GatherShapeSplitsOutputIndex) {
  // data [2, 5, 3] gathered on axis 1 by 4 indices: output [2, 4, 3].
  GatherShape g;
  g.dim = 5;
  g.count = 4;
  g.inner = 3;
  for (int64_t i = 0; i < 24; ++i) {
    int64_t o, j, k;
    g.split(i, o, j, k);
    EXPECT_EQ(ravel({o, j, k}, {2, 4, 3}), i);
  }
}

TEST(CudaMovementIndex, GatherElementsMapMatchesNaive) {
  // data [3, 4, 2], indices [3, 2, 2] on axis 1.
  const Dims ds = {3, 4, 2}, is = {3, 2, 2};
  Dims st = contiguous_strides(ds);
  GatherElementsMap m;
  m.axis_dim = ds[1];
  m.axis_stride = st[1];
  st[1] = 0;
  m.map.rank = 3;
  for (int d = 0; d < 3; ++d) {
    m.map.dims[d] = is[static_cast<size_t>(d)];
    m.map.strides[d] = st[static_cast<size_t>(d)];
  }
  for (int64_t i = 0; i < count_of(is); ++i) {
    const int64_t index = (i * 7) % 9 - 4;  // -4 .. 4: 4 is out of range
    Dims pos = unravel(i, is);
    const int64_t w = index < 0 ? index + 4 : index;
    pos[1] = w;
    EXPECT_EQ(m.offset(i, index), index >= 4 ? -1 : ravel(pos, ds)) << i;
  }
}

TEST(CudaMovementIndex, GatherNdMapMatchesNaive) {
  // data [2, 3, 4, 5] with batch_dims 1, indices [2, 6, 2]: tuples address
  // [3, 4] inside each batch, slices of 5.
  const Dims ds = {2, 3, 4, 5};
  const Dims st = contiguous_strides(ds);
  GatherNdMap m;
  m.k = 2;
  m.tuples = 6;
  m.batch_stride = 60;
  m.slice = 5;
  m.dims[0] = 3, m.dims[1] = 4;
  m.strides[0] = st[1], m.strides[1] = st[2];
  std::vector<int64_t> idx;
  for (int64_t t = 0; t < 12; ++t) {
    idx.push_back(t % 3 - (t % 2 ? 3 : 0));  // some negative
    idx.push_back((t * 5) % 4);
  }
  idx[5] = 4;  // tuple 2 out of range on its second coordinate
  for (int64_t t = 0; t < 12; ++t) {
    const int64_t b = t / 6;
    const int64_t a0 = idx[static_cast<size_t>(2 * t)], a1 = idx[static_cast<size_t>(2 * t + 1)];
    const bool bad = a1 >= 4;
    const int64_t want = bad ? -1 : ravel({b, a0 < 0 ? a0 + 3 : a0, a1, 0}, ds);
    EXPECT_EQ(m.slice_offset(t, idx.data() + 2 * t), want) << t;
  }
}

}  // namespace
}  // namespace loom::cuda
