// Index arithmetic shared by the host (which prepares it, and the unit
// tests, which run it on the CPU) and the device kernels: element offsets
// of broadcast and strided views of a tensor, in up to kMaxRank dims. Plain
// C++ under g++; __host__ __device__ under nvcc.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#ifdef __CUDACC__
#define LOOM_HD __host__ __device__ __forceinline__
#else
#define LOOM_HD inline
#endif

namespace loom::cuda {

constexpr int kMaxRank = 8;

// Maps the linear index of an element of an output of `rank` dims (row
// major, sizes `dims`) to the offset of the element it reads from an input
// whose dim d advances `strides[d]` elements (0 where the input is
// broadcast along d, or any stride of a strided view).
struct StridedMap {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t strides[kMaxRank] = {};

  LOOM_HD int64_t offset(int64_t linear) const {
    int64_t off = 0;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t n = dims[d];
      const int64_t q = linear / n;
      off += (linear - q * n) * strides[d];
      linear = q;
    }
    return off;
  }
};

// Row-major strides of `dims`.
inline std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) s[d - 1] = s[d] * dims[d];
  return s;
}

// ONNX (numpy) multidirectional broadcast of two shapes; throws
// std::invalid_argument when they do not broadcast.
inline std::vector<int64_t> broadcast_shape(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const size_t rank = a.size() > b.size() ? a.size() : b.size();
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      throw std::invalid_argument("shapes do not broadcast: dim " + std::to_string(da) + " against " +
                                  std::to_string(db));
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// The map of a view with sizes `dims` and element strides `strides`
// (equal lengths); throws std::invalid_argument past kMaxRank dims.
inline StridedMap strided_map(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides) {
  if (dims.size() > static_cast<size_t>(kMaxRank))
    throw std::invalid_argument("a view of " + std::to_string(dims.size()) + " dims, more than " +
                                std::to_string(kMaxRank));
  StridedMap m;
  m.rank = static_cast<int>(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    m.dims[d] = dims[d];
    m.strides[d] = strides[d];
  }
  return m;
}

// The map reading `in` (dims right-aligned to `out`, each 1 or equal) as
// broadcast to `out`. Dims of size 1 in `out` are dropped and neighbours
// that stay contiguous are merged, so the map has as few dims as possible.
// Throws std::invalid_argument past kMaxRank dims after merging.
inline StridedMap broadcast_map(const std::vector<int64_t>& out, const std::vector<int64_t>& in) {
  const size_t rank = out.size();
  std::vector<int64_t> in_dims(rank, 1);
  for (size_t i = 0; i < in.size(); ++i) in_dims[rank - in.size() + i] = in[i];
  const std::vector<int64_t> in_strides = contiguous_strides(in_dims);
  std::vector<int64_t> dims, strides;
  for (size_t d = 0; d < rank; ++d) {
    if (out[d] == 1) continue;
    const int64_t stride = in_dims[d] == 1 ? 0 : in_strides[d];
    // Merge with the previous dim when one index walks both: both broadcast,
    // or the previous stride is this one's times this size.
    if (!dims.empty() && ((strides.back() == 0 && stride == 0) || strides.back() == stride * out[d])) {
      dims.back() *= out[d];
      strides.back() = stride;
      continue;
    }
    dims.push_back(out[d]);
    strides.push_back(stride);
  }
  return strided_map(dims, strides);
}

// Whether `in` read as broadcast to `out` is just `in` element for element.
inline bool same_elements(const std::vector<int64_t>& out, const std::vector<int64_t>& in) {
  int64_t a = 1, b = 1;
  for (int64_t d : out) a *= d;
  for (int64_t d : in) b *= d;
  return a == b;
}

}  // namespace loom::cuda
