// Multidirectional (numpy-style) broadcasting for reference kernels.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "common/shape.h"

namespace loom::reference {

// Output shape of broadcasting all `shapes`; throws INVALID_ARGUMENT naming
// the op when two dims differ and neither is 1.
inline Shape broadcast_shape(const std::vector<Shape>& shapes, std::string_view op) {
  size_t rank = 0;
  for (const Shape& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (const Shape& s : shapes) {
    const size_t off = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& o = out[off + i];
      if (s[i] == o || s[i] == 1) continue;
      if (o == 1) {
        o = s[i];
        continue;
      }
      std::string all;
      for (const Shape& t : shapes) all += shape_string(t) + " ";
      throw sdk::Error(std::string(op) + ": shapes " + all + "cannot be broadcast",
                       LOOM_STATUS_INVALID_ARGUMENT);
    }
  }
  return out;
}

// Strides of `in` viewed with `out`'s rank: 0 on broadcast dims.
inline Shape broadcast_strides(const Shape& in, const Shape& out) {
  Shape st(out.size(), 0);
  const Shape own = strides_of(in);
  const size_t off = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) st[off + i] = in[i] == 1 ? 0 : own[i];
  return st;
}

// Calls f(out_index, in_offsets) for every element of `out`, where
// in_offsets[k] is the element offset into input k. Fast path when every
// input already has the output's shape.
template <class F>
void for_each_broadcast(const Shape& out, const std::vector<Shape>& ins, F&& f) {
  const int64_t n = element_count(out);
  const size_t k = ins.size();
  std::vector<int64_t> offs(k, 0);
  bool same = true;
  for (const Shape& s : ins) same = same && s == out;
  if (same) {
    for (int64_t i = 0; i < n; ++i) {
      std::fill(offs.begin(), offs.end(), i);
      f(i, offs.data());
    }
    return;
  }
  std::vector<Shape> st;
  for (const Shape& s : ins) st.push_back(broadcast_strides(s, out));
  const size_t rank = out.size();
  Shape idx(rank, 0);
  for (int64_t i = 0; i < n; ++i) {
    f(i, offs.data());
    // Advance the odometer and the offsets incrementally.
    for (size_t d = rank; d-- > 0;) {
      ++idx[d];
      for (size_t j = 0; j < k; ++j) offs[j] += st[j][d];
      if (idx[d] < out[d]) break;
      for (size_t j = 0; j < k; ++j) offs[j] -= st[j][d] * out[d];
      idx[d] = 0;
    }
  }
}

}  // namespace loom::reference
