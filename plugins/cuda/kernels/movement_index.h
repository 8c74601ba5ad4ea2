// Index arithmetic of the data-movement kernels (kernels/movement.cu),
// shared with the host that prepares it and the CPU unit tests
// (tests/ep/cuda/movement_host_test.cpp): ONNX Slice normalisation, the
// maps of Tile and Pad, and the bounds rule of the gathers. Plain C++ under
// g++; __host__ __device__ under nvcc. Every map takes the linear index of
// an output element (row major) and gives the element offset it reads.
#pragma once

#include <cstdint>

#include "kernels/index_math.h"

namespace loom::cuda {

// One axis of an ONNX Slice (opset 10+ semantics, also opset 1's with step
// 1): `start` / `end` may be negative (counted from the back) or past
// either end (clamped); `step` is non-zero (the caller rejects 0). The
// result is the first index read and how many are read.
struct SliceAxis {
  int64_t start = 0;
  int64_t count = 0;
};

LOOM_HD int64_t clamp_index(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

LOOM_HD SliceAxis slice_axis(int64_t start, int64_t end, int64_t step, int64_t dim) {
  SliceAxis r;
  if (dim <= 0 || step == 0) return r;
  int64_t s = start, e = end;
  if (s < 0) s += dim;  // no overflow: dim > 0 and s < 0
  if (e < 0) e += dim;
  if (step > 0) {
    s = clamp_index(s, 0, dim);
    e = clamp_index(e, 0, dim);
    r.count = e > s ? 1 + (e - s - 1) / step : 0;
  } else {
    s = clamp_index(s, 0, dim - 1);
    e = clamp_index(e, -1, dim - 1);
    // -step cannot be formed for INT64_MIN; such a step reads one element.
    r.count = s > e ? (step == INT64_MIN ? 1 : 1 + (s - e - 1) / (-step)) : 0;
  }
  r.start = r.count > 0 ? s : 0;
  return r;
}

// Host side: the same map with dims of size 1 dropped and neighbours one
// index walks (stride[d-1] == stride[d] * dims[d]) merged, so a kernel
// divides less and a plain copy becomes one dim of stride 1.
inline StridedMap compact_map(const StridedMap& m) {
  StridedMap r;
  for (int d = 0; d < m.rank; ++d) {
    if (m.dims[d] == 1) continue;
    if (r.rank > 0 && r.strides[r.rank - 1] == m.strides[d] * m.dims[d]) {
      r.dims[r.rank - 1] *= m.dims[d];
      r.strides[r.rank - 1] = m.strides[d];
      continue;
    }
    r.dims[r.rank] = m.dims[d];
    r.strides[r.rank] = m.strides[d];
    ++r.rank;
  }
  return r;
}

// Host side: the map of a transpose of a contiguous tensor of `in` dims by
// `perm` (output dim i is input dim perm[i]; perm already validated).
// Throws std::invalid_argument past kMaxRank dims.
inline StridedMap permute_map(const std::vector<int64_t>& in, const std::vector<int64_t>& perm) {
  if (in.size() > static_cast<size_t>(kMaxRank) || perm.size() != in.size())
    throw std::invalid_argument("transpose of rank " + std::to_string(in.size()) + " (at most " +
                                std::to_string(kMaxRank) + ")");
  const std::vector<int64_t> st = contiguous_strides(in);
  StridedMap m;
  m.rank = static_cast<int>(in.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    m.dims[i] = in[static_cast<size_t>(perm[i])];
    m.strides[i] = st[static_cast<size_t>(perm[i])];
  }
  return m;
}

// Tile: output dim d is in_dims[d] * repeats[d]; output index o reads input
// index o % in_dims[d]. Only used with a non-empty output (no dim is 0).
struct TileMap {
  int rank = 0;
  int64_t out_dims[kMaxRank] = {};
  int64_t in_dims[kMaxRank] = {};
  int64_t in_strides[kMaxRank] = {};

  LOOM_HD int64_t offset(int64_t linear) const {
    int64_t off = 0;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t q = linear / out_dims[d];
      const int64_t o = linear - q * out_dims[d];
      off += (o % in_dims[d]) * in_strides[d];
      linear = q;
    }
    return off;
  }
};

// Pad modes (ONNX Pad `mode`; wrap is opset 19).
enum class PadMode : int { kConstant = 0, kReflect = 1, kEdge = 2, kWrap = 3 };

// Pad: output index o of dim d is input index o - begin[d] (begin may be
// negative: a crop). Outside [0, in_dims[d]): constant -> no input element
// (offset -1, the kernel writes the pad value); edge -> the nearest edge;
// wrap -> modulo; reflect -> mirrored about the edges without repeating
// them, periodic with period 2(n-1) like numpy (n == 1 reads index 0).
// Non-constant modes need in_dims[d] > 0 wherever the output is non-empty
// (the host checks).
struct PadMap {
  int rank = 0;
  PadMode mode = PadMode::kConstant;
  int64_t out_dims[kMaxRank] = {};
  int64_t in_dims[kMaxRank] = {};
  int64_t in_strides[kMaxRank] = {};
  int64_t begin[kMaxRank] = {};

  LOOM_HD static int64_t source_index(PadMode mode, int64_t i, int64_t n) {
    if (i >= 0 && i < n) return i;
    switch (mode) {
      case PadMode::kConstant: return -1;
      case PadMode::kEdge: return i < 0 ? 0 : n - 1;
      case PadMode::kWrap: return ((i % n) + n) % n;
      case PadMode::kReflect: {
        if (n == 1) return 0;
        const int64_t m = 2 * (n - 1);
        int64_t r = ((i % m) + m) % m;
        return r >= n ? m - r : r;
      }
    }
    return -1;
  }

  // Offset in the input, or -1 where the constant is written.
  LOOM_HD int64_t offset(int64_t linear) const {
    int64_t off = 0;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t q = linear / out_dims[d];
      const int64_t o = linear - q * out_dims[d];
      const int64_t i = source_index(mode, o - begin[d], in_dims[d]);
      if (i < 0) return -1;
      off += i * in_strides[d];
      linear = q;
    }
    return off;
  }
};

// A gather index in [-dim, dim) as [0, dim); -1 when out of range (the
// kernels then write zero bytes: a device kernel cannot raise an error).
LOOM_HD int64_t gather_index(int64_t idx, int64_t dim) {
  if (idx < -dim || idx >= dim) return -1;
  return idx < 0 ? idx + dim : idx;
}

// Gather along `axis`: data viewed as [outer, dim, inner], indices as a
// flat list of `count`; output element i = (o * count + j) * inner + k
// reads data (o * dim + indices[j]) * inner + k.
struct GatherShape {
  int64_t dim = 0;
  int64_t count = 0;
  int64_t inner = 0;

  // Output element i's position (o, j, k) as {o, j, k}.
  LOOM_HD void split(int64_t i, int64_t& o, int64_t& j, int64_t& k) const {
    k = i % inner;
    const int64_t t = i / inner;
    j = t % count;
    o = t / count;
  }
};

// GatherElements: output element i (indices shape `map.dims`) reads the
// data element at its own position with the `axis` coordinate replaced by
// the index: map.strides are the data's with 0 along the axis.
struct GatherElementsMap {
  StridedMap map;
  int64_t axis_dim = 0;
  int64_t axis_stride = 0;

  // -1 when the index is out of range.
  LOOM_HD int64_t offset(int64_t i, int64_t index) const {
    const int64_t w = gather_index(index, axis_dim);
    return w < 0 ? -1 : map.offset(i) + w * axis_stride;
  }
};

// GatherND: indices [batch..., tuples..., k]; data [batch..., d_0..d_k-1,
// slice...]. Tuple t (counted over every batch) addresses the slice at
// batch (t / tuples) and coordinates (tuple[0..k)).
struct GatherNdMap {
  int k = 0;
  int64_t tuples = 1;        // tuples per batch
  int64_t batch_stride = 0;  // data elements per batch
  int64_t slice = 1;         // elements per addressed slice
  int64_t dims[kMaxRank] = {};
  int64_t strides[kMaxRank] = {};

  // Offset of tuple t's slice in the data; -1 when an index is out of range.
  template <class I>
  LOOM_HD int64_t slice_offset(int64_t t, const I* tuple) const {
    int64_t off = (t / tuples) * batch_stride;
    for (int j = 0; j < k; ++j) {
      const int64_t w = gather_index(static_cast<int64_t>(tuple[j]), dims[j]);
      if (w < 0) return -1;
      off += w * strides[j];
    }
    return off;
  }
};

}  // namespace loom::cuda
