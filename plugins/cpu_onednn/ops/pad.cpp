// Pad (opsets 1 to 23: constant, reflect, edge, wrap; pads, value and axes
// known when the partition is built) on float32 data, as a host step: each
// output row (all dims but the last) comes from one input row or is the
// constant; inside a row the middle is one copy and the edges follow the
// mode. The row's source follows the reference EP's mapping exactly
// (reflect is periodic with period 2(n - 1), like numpy; a dim of 1
// reflects to itself), so the results are the same values.
#include <algorithm>
#include <cstring>

#include "host_kernels/parallel.h"
#include "ops/op_builders.h"

namespace loom::onednn {
namespace {

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

// Input coordinate of output coordinate o along a dim of n with `begin`
// padding in front, or -1 where the constant goes.
int64_t source_index(int64_t o, int64_t begin, int64_t n, PadMode mode) {
  int64_t i = o - begin;
  if (i >= 0 && i < n) return i;
  switch (mode) {
    case PadMode::kConstant: return -1;
    case PadMode::kEdge: return std::clamp<int64_t>(i, 0, n - 1);
    case PadMode::kWrap: return ((i % n) + n) % n;
    case PadMode::kReflect: {
      if (n == 1) return 0;
      const int64_t m = 2 * (n - 1);
      i = ((i % m) + m) % m;
      return i >= n ? m - i : i;
    }
  }
  return -1;
}

struct PadGeometry {
  std::vector<int64_t> in, out, begin;
  PadMode mode = PadMode::kConstant;
  float value = 0.f;
};

PadGeometry pad_geometry(const NodeSpec& n, const std::vector<int64_t>& in) {
  PadGeometry g;
  g.in = in;
  const int64_t rank = static_cast<int64_t>(in.size());
  const std::string mode = n.attr_string("mode", "constant");
  if (mode == "constant") g.mode = PadMode::kConstant;
  else if (mode == "reflect") g.mode = PadMode::kReflect;
  else if (mode == "edge") g.mode = PadMode::kEdge;
  else if (mode == "wrap") g.mode = PadMode::kWrap;
  else n.fail("unknown mode '" + mode + "'");
  std::vector<int64_t> raw;
  if (n.opset < 11) {
    raw = n.attr_ints(n.opset < 2 ? "paddings" : "pads");
    g.value = n.attr_float("value", 0.f);
  } else {
    auto pads = n.small_constants.find(1);
    if (pads == n.small_constants.end()) n.fail("pads must be a constant");
    for (double v : pads->second) raw.push_back(static_cast<int64_t>(v));
    if (auto v = n.small_constants.find(2); n.has_input(2) && v != n.small_constants.end() && !v->second.empty())
      g.value = static_cast<float>(v->second[0]);
  }
  std::vector<int64_t> axes;
  if (n.opset >= 18 && n.has_input(3)) {
    auto a = n.small_constants.find(3);
    if (a == n.small_constants.end()) n.fail("axes must be a constant");
    for (double v : a->second) axes.push_back(static_cast<int64_t>(v));
  } else {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  if (raw.size() != 2 * axes.size())
    n.fail("pads has " + std::to_string(raw.size()) + " entries, expected " + std::to_string(2 * axes.size()));
  g.begin.assign(in.size(), 0);
  std::vector<int64_t> end(in.size(), 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t ax = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (ax < 0 || ax >= rank) n.fail("axis " + std::to_string(axes[i]) + " is out of range");
    g.begin[ax] = raw[i];
    end[ax] = raw[i + axes.size()];
  }
  for (int64_t d = 0; d < rank; ++d) {
    const std::string what = "cpu_onednn Pad dimension " + std::to_string(d);
    g.out.push_back(sdk::checked_add(sdk::checked_add(in[d], g.begin[d], what), end[d], what));
    if (g.out.back() < 0) n.fail("pads make dimension " + std::to_string(d) + " negative");
    if (g.mode != PadMode::kConstant && in[d] == 0 && g.out.back() > 0)
      n.fail("cannot pad an empty dimension in " + mode + " mode");
  }
  return g;
}

// One output row: the middle copied, the edges by the mode.
void pad_row(const PadGeometry& g, const float* src, float* dst) {
  const int64_t n = g.in.back(), w = g.out.back(), begin = g.begin.back();
  const int64_t lo = std::clamp<int64_t>(begin, 0, w), hi = std::clamp<int64_t>(begin + n, lo, w);
  for (int64_t o = 0; o < lo; ++o) {
    const int64_t i = source_index(o, begin, n, g.mode);
    dst[o] = i < 0 ? g.value : src[i];
  }
  if (hi > lo) std::memcpy(dst + lo, src + (lo - begin), static_cast<size_t>(hi - lo) * sizeof(float));
  for (int64_t o = hi; o < w; ++o) {
    const int64_t i = source_index(o, begin, n, g.mode);
    dst[o] = i < 0 ? g.value : src[i];
  }
}

}  // namespace

size_t build_pad(ProgramBuilder& b, const NodeSpec& n, const Chain&) {
  const ValueId x = b.plain(b.value_of(n.inputs[0]));
  const PadGeometry g = pad_geometry(n, b.dims(x));
  if (g.in.empty()) n.fail("a scalar cannot be padded");
  const ValueId y = b.new_value(plain_desc(g.out), g.out, n.outputs[0]);
  const int threads = b.options().threads;
  const std::string label = n.label();
  b.add_host_step(
      [g, threads](const std::vector<dnnl::memory>& m) {
        const auto* src = static_cast<const float*>(m[0].get_data_handle());
        auto* dst = static_cast<float*>(m[1].get_data_handle());
        const size_t rank = g.out.size();
        const int64_t w = g.out.back(), rows = element_count(g.out) / std::max<int64_t>(w, 1);
        if (w == 0 || rows == 0) return;
        for_each_thread_range(threads, rows, [&](int64_t r0, int64_t r1) {
          std::vector<int64_t> idx(rank, 0);
          for (int64_t r = r0; r < r1; ++r) {
            // The row's output coordinates (all dims but the last), then its source row.
            int64_t rem = r, src_row = 0, stride = 1;
            bool constant = false;
            for (size_t d = rank - 1; d-- > 0;) {
              idx[d] = rem % g.out[d];
              rem /= g.out[d];
            }
            for (size_t d = rank - 1; d-- > 0;) {
              const int64_t i = source_index(idx[d], g.begin[d], g.in[d], g.mode);
              if (i < 0) constant = true;
              src_row += i * stride;
              stride *= g.in[d];
            }
            float* out = dst + r * w;
            if (constant) std::fill(out, out + w, g.value);
            else pad_row(g, src + src_row * g.in.back(), out);
          }
        });
      },
      {x, y}, label);
  b.define(n.outputs[0], y);
  return 0;
}

}  // namespace loom::onednn
