// Index arithmetic of the reduction family (reductions, ArgMax/ArgMin,
// TopK, CumSum, Softmax), shared by the host, which plans it, the device
// kernels, which run it, and the CPU unit tests (tests/ep/cuda/
// reduce_host_test.cpp). Plain C++ under g++; __host__ __device__ under nvcc.
// Planning functions throw std::invalid_argument; the kernel classes turn
// that into an INVALID_ARGUMENT error naming the op.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/index_math.h"

namespace loom::cuda {

// A tensor seen as rows along one axis: [outer, n, inner] (row-major), row
// r = o * inner + i holding the n elements (o, 0..n-1, i), `inner` apart.
struct AxisRows {
  int64_t outer = 1, n = 1, inner = 1;

  LOOM_HD int64_t rows() const { return outer * inner; }
  // Offset of element 0 of row r.
  LOOM_HD int64_t base(int64_t r) const { return (r / inner) * n * inner + r % inner; }
  // Offset of element k of row r.
  LOOM_HD int64_t at(int64_t r, int64_t k) const { return base(r) + k * inner; }
};

// The rows of `dims` along `axis` (in [0, rank)).
inline AxisRows axis_rows(const std::vector<int64_t>& dims, int64_t axis) {
  AxisRows a;
  for (int64_t d = 0; d < static_cast<int64_t>(dims.size()); ++d) {
    if (d < axis) a.outer *= dims[static_cast<size_t>(d)];
    else if (d == axis) a.n = dims[static_cast<size_t>(d)];
    else a.inner *= dims[static_cast<size_t>(d)];
  }
  return a;
}

// Softmax before opset 13: the input coerced to 2-D [prod(dims[:axis]),
// prod(dims[axis:])] (axis in [0, rank]), one row per first index.
inline AxisRows coerced_rows(const std::vector<int64_t>& dims, int64_t axis) {
  AxisRows a;
  a.n = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(dims.size()); ++d)
    (d < axis ? a.outer : a.n) *= dims[static_cast<size_t>(d)];
  return a;
}

// Which dims a reduction reduces, from its axes (each in [-rank, rank), none
// repeated). Empty axes reduce every dim, or none when `empty_is_noop`
// (noop_with_empty_axes with the axes given as an input).
inline std::vector<bool> reduced_dims(const std::vector<int64_t>& axes, int64_t rank, bool empty_is_noop) {
  std::vector<bool> reduced(static_cast<size_t>(rank), axes.empty() && !empty_is_noop);
  for (int64_t a : axes) {
    if (a < -rank || a >= rank)
      throw std::invalid_argument("axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
    const size_t d = static_cast<size_t>(a < 0 ? a + rank : a);
    if (reduced[d]) throw std::invalid_argument("axis " + std::to_string(a) + " is repeated in 'axes'");
    reduced[d] = true;
  }
  return reduced;
}

// Where the elements reduced into each output live: output o (row-major
// over the kept dims, which is the output's layout with or without
// keepdims) starts at input offset kept.offset(o), and its j-th reduced
// element (row-major over the reduced dims) is reduced.offset(j) further.
// Dims of size 1 are dropped and neighbours that stay contiguous merged, so
// reducing the last axes of a tensor is one map of one dim of stride 1.
struct ReduceMaps {
  StridedMap kept, reduced;
  int64_t outputs = 0;  // output elements
  int64_t count = 0;    // elements reduced into each output (0: empty reduction)

  // Whether each output's reduced elements are contiguous (offset j).
  LOOM_HD bool contiguous() const { return reduced.rank == 0 || (reduced.rank == 1 && reduced.strides[0] == 1); }
  LOOM_HD int64_t element(int64_t o, int64_t j) const {
    return kept.offset(o) + (contiguous() ? j : reduced.offset(j));
  }
};

struct ReducePlan {
  std::vector<int64_t> out_dims;
  ReduceMaps maps;
};

namespace reduce_detail {
// Appends a dim to a map's lists, merged into the previous one when one
// index walks both.
inline void push_dim(std::vector<int64_t>& dims, std::vector<int64_t>& strides, int64_t dim, int64_t stride) {
  if (!dims.empty() && strides.back() == stride * dim) {
    dims.back() *= dim;
    strides.back() = stride;
    return;
  }
  dims.push_back(dim);
  strides.push_back(stride);
}

inline StridedMap to_map(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides, const char* what) {
  if (dims.size() > static_cast<size_t>(kMaxRank))
    throw std::invalid_argument(std::string(what) + " dims need " + std::to_string(dims.size()) +
                                " strides after merging, more than " + std::to_string(kMaxRank));
  return strided_map(dims, strides);
}
}  // namespace reduce_detail

// The output shape and maps of reducing `in` over the dims flagged in
// `reduced` (one flag per dim).
inline ReducePlan plan_reduce(const std::vector<int64_t>& in, const std::vector<bool>& reduced, bool keepdims) {
  if (reduced.size() != in.size()) throw std::invalid_argument("one reduced flag per dim is needed");
  ReducePlan p;
  p.maps.outputs = 1;
  p.maps.count = 1;
  for (size_t d = 0; d < in.size(); ++d) {
    if (in[d] < 0) throw std::invalid_argument("negative dim " + std::to_string(in[d]));
    if (!reduced[d]) p.out_dims.push_back(in[d]);
    else if (keepdims) p.out_dims.push_back(1);
    (reduced[d] ? p.maps.count : p.maps.outputs) *= in[d];
  }
  // Nothing is read when there is no output or nothing to reduce: no maps.
  if (p.maps.outputs == 0 || p.maps.count == 0) return p;
  const std::vector<int64_t> strides = contiguous_strides(in);
  std::vector<int64_t> kd, ks, rd, rs;
  for (size_t d = 0; d < in.size(); ++d) {
    if (in[d] == 1) continue;
    if (reduced[d]) reduce_detail::push_dim(rd, rs, in[d], strides[d]);
    else reduce_detail::push_dim(kd, ks, in[d], strides[d]);
  }
  p.maps.kept = reduce_detail::to_map(kd, ks, "kept");
  p.maps.reduced = reduce_detail::to_map(rd, rs, "reduced");
  return p;
}

// The output dims of an op that reduces one axis to `keep` elements (1 and
// dropped unless keepdims for ArgMax/ArgMin; k for TopK).
inline std::vector<int64_t> axis_output_dims(const std::vector<int64_t>& in, int64_t axis, bool keepdims) {
  std::vector<int64_t> out;
  for (int64_t d = 0; d < static_cast<int64_t>(in.size()); ++d) {
    if (d != axis) out.push_back(in[static_cast<size_t>(d)]);
    else if (keepdims) out.push_back(1);
  }
  return out;
}

// TopK's radix path sorts keys whose ascending unsigned order is the rank
// order: NaN after every number, -0 equal to +0; `largest` reverses the
// numbers' order (NaN then comes first, as the reference ranks it).
LOOM_HD uint32_t topk_key32(uint32_t ordered, bool largest) { return largest ? ~ordered : ordered; }
LOOM_HD uint64_t topk_key64(uint64_t ordered, bool largest) { return largest ? ~ordered : ordered; }

// The order-preserving unsigned image of a float's bits (NaN highest).
LOOM_HD uint32_t ordered_float_bits(uint32_t bits) {
  const bool nan = (bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu) != 0;
  if (nan) return 0xffffffffu;
  if ((bits & 0x7fffffffu) == 0) bits = 0;  // -0 as +0
  return (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
}
LOOM_HD uint64_t ordered_double_bits(uint64_t bits) {
  const uint64_t exp = 0x7ff0000000000000ull, mant = 0x000fffffffffffffull, sign = 0x8000000000000000ull;
  if ((bits & exp) == exp && (bits & mant) != 0) return ~0ull;
  if ((bits & ~sign) == 0) bits = 0;
  return (bits & sign) ? ~bits : (bits | sign);
}
LOOM_HD uint32_t ordered_int32_bits(int32_t v) { return static_cast<uint32_t>(v) ^ 0x80000000u; }
LOOM_HD uint64_t ordered_int64_bits(int64_t v) { return static_cast<uint64_t>(v) ^ 0x8000000000000000ull; }

// TopK's rank order, a strict total order on (value, index): NaN ranks
// above every number (first when `largest`, last otherwise), then the
// larger (largest) or smaller value, then the lower index. Indices >= n
// are padding, after every element.
template <class A>
LOOM_HD bool topk_before(A a, int64_t ai, A b, int64_t bi, bool largest, int64_t n) {
  const bool ap = ai >= n, bp = bi >= n;
  if (ap || bp) return ap && bp ? ai < bi : bp;
  const bool an = a != a, bn = b != b;  // NaN (never for integers)
  if (an || bn) return an && bn ? ai < bi : (largest ? an : bn);
  if (a != b) return largest ? a > b : a < b;
  return ai < bi;
}

// Bitonic sort of a power-of-two array in shared memory (TopK rows up to
// kTopkBitonicMax): at step (size, stride), pair t compares elements i and
// i + stride, sorting ascending where (i & size) == 0.
constexpr int64_t kTopkBitonicMax = 2048;
LOOM_HD int64_t bitonic_first(int64_t t, int64_t stride) { return 2 * stride * (t / stride) + t % stride; }
LOOM_HD bool bitonic_ascending(int64_t i, int64_t size) { return (i & size) == 0; }
// The smallest power of two >= n (n >= 1).
LOOM_HD int64_t next_pow2(int64_t n) {
  int64_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

}  // namespace loom::cuda
