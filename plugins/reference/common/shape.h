// Shape arithmetic shared by reference kernels.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "loom/sdk.h"

namespace loom::reference {

using Shape = std::vector<int64_t>;

// Saturates at INT64_MAX when the product overflows (a hostile shape), so
// comparisons with real sizes fail instead of wrapping (undefined behaviour).
inline int64_t element_count(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s)
    if (__builtin_mul_overflow(n, d, &n)) return std::numeric_limits<int64_t>::max();
  return n;
}

// Row-major strides in elements.
inline Shape strides_of(const Shape& s) {
  Shape st(s.size(), 1);
  for (int64_t i = static_cast<int64_t>(s.size()) - 2; i >= 0; --i) st[i] = st[i + 1] * s[i + 1];
  return st;
}

// Maps a possibly negative axis into [0, rank); throws naming the op.
inline int64_t normalize_axis(int64_t axis, int64_t rank, std::string_view op) {
  if (axis < -rank || axis >= rank)
    throw sdk::Error(std::string(op) + ": axis " + std::to_string(axis) + " out of range for rank " +
                         std::to_string(rank),
                     LOOM_STATUS_INVALID_ARGUMENT);
  return axis < 0 ? axis + rank : axis;
}

// Product of dims [begin, end).
inline int64_t dims_product(const Shape& s, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end && i < s.size(); ++i) n *= s[i];
  return n;
}

inline std::string shape_string(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

}  // namespace loom::reference
