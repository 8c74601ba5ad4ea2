// Tensor family, layout kernels: Transpose, Concat, Split, Slice, Expand,
// Tile, Pad, DepthToSpace, SpaceToDepth. All move elements by size, so they
// serve every fixed-size element type and strings.
#include <algorithm>
#include <limits>

#include "common/broadcast.h"
#include "common/dispatch.h"
#include "common/tensor_copy.h"
#include "common/tensor_kernels.h"

namespace loom::reference {
namespace {

using sdk::KernelContext;

constexpr int kOpen = LOOM_OPSET_OPEN_END;

// ---------------------------------------------------------------- Transpose

void transpose(KernelContext& ctx) {
  const sdk::ConstTensor x = ctx.required_input(0);
  const Shape in = x.shape();
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> perm = ctx.node().attr_ints("perm");
  if (perm.empty()) {
    for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
  }
  if (static_cast<int64_t>(perm.size()) != rank)
    sdk::fail_invalid("Transpose: perm has " + std::to_string(perm.size()) + " entries for rank " +
                      std::to_string(rank));
  std::vector<bool> seen(rank, false);
  for (int64_t& p : perm) {
    p = normalize_axis(p, rank, "Transpose");
    if (seen[p]) sdk::fail_invalid("Transpose: perm is not a permutation");
    seen[p] = true;
  }
  Shape out_shape(rank);
  for (int64_t i = 0; i < rank; ++i) out_shape[i] = in[perm[i]];
  const sdk::Tensor y = ctx.output(0, out_shape, x.dtype());
  permuted_copy(ElementCopier(x, y, "Transpose"), in, perm);
}

// ---------------------------------------------------------------- Concat

void concat(KernelContext& ctx) {
  const size_t n = ctx.input_count();
  if (n == 0) sdk::fail_invalid("Concat: no inputs");
  const sdk::ConstTensor first = ctx.required_input(0);
  const Shape s0 = first.shape();
  const int64_t rank = static_cast<int64_t>(s0.size());
  const int64_t default_axis = ctx.node().opset() < 4 ? 1 : 0;
  const int64_t axis = normalize_axis(
      ctx.node().opset() < 4 ? ctx.node().attr_int("axis", default_axis) : ctx.node().required_int("axis"),
      rank, "Concat");
  Shape out_shape = s0;
  out_shape[axis] = 0;
  for (size_t i = 0; i < n; ++i) {
    const sdk::ConstTensor t = ctx.required_input(i);
    const Shape s = t.shape();
    if (t.dtype() != first.dtype()) sdk::fail_invalid("Concat: input types differ");
    bool ok = static_cast<int64_t>(s.size()) == rank;
    for (int64_t d = 0; ok && d < rank; ++d) ok = d == axis || s[d] == s0[d];
    if (!ok)
      sdk::fail_invalid("Concat: input " + std::to_string(i) + " shape " + shape_string(s) +
                        " does not match " + shape_string(s0) + " off axis " + std::to_string(axis));
    out_shape[axis] += s[axis];
  }
  const sdk::Tensor y = ctx.output(0, out_shape, first.dtype());
  const int64_t outer = dims_product(s0, 0, axis), inner = dims_product(s0, axis + 1, rank);
  const int64_t out_row = out_shape[axis] * inner;
  int64_t col = 0;  // offset of the current input inside an output row
  for (size_t i = 0; i < n; ++i) {
    const sdk::ConstTensor t = ctx.input(i);
    const int64_t row = t.dim(axis) * inner;
    if (row > 0) {
      ElementCopier c(t, y, "Concat");
      for (int64_t o = 0; o < outer; ++o) c.copy(o * out_row + col, o * row, row);
    }
    col += row;
  }
}

// ---------------------------------------------------------------- Split

void split(KernelContext& ctx) {
  const sdk::ConstTensor x = ctx.required_input(0);
  const Shape in = x.shape();
  const int64_t rank = static_cast<int64_t>(in.size());
  const int64_t axis = normalize_axis(ctx.node().attr_int("axis", 0), rank, "Split");
  const int64_t n_out = static_cast<int64_t>(ctx.output_count());
  std::vector<int64_t> sizes;
  if (const sdk::ConstTensor s = ctx.input(1); s.exists() && (ctx.node().opset() >= 13 || ctx.node().opset() < 2)) {
    sizes = read_indices(s, "Split", "split");
  } else if (ctx.node().opset() < 13) {
    sizes = ctx.node().attr_ints("split");
  }
  const int64_t dim = in[axis];
  if (sizes.empty()) {
    if (n_out <= 0) sdk::fail_invalid("Split: node has no outputs");
    if (ctx.node().has_attr("num_outputs")) {  // opset 18: the last chunk may be smaller
      const int64_t chunk = (dim + n_out - 1) / n_out;
      for (int64_t i = 0; i < n_out; ++i) sizes.push_back(std::max<int64_t>(0, std::min(chunk, dim - i * chunk)));
    } else {
      if (dim % n_out != 0)
        sdk::fail_invalid("Split: dimension " + std::to_string(dim) + " is not divisible into " +
                          std::to_string(n_out) + " equal parts");
      sizes.assign(n_out, dim / n_out);
    }
  }
  if (static_cast<int64_t>(sizes.size()) != n_out)
    sdk::fail_invalid("Split: " + std::to_string(sizes.size()) + " split sizes for " + std::to_string(n_out) +
                      " outputs");
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0) sdk::fail_invalid("Split: negative split size");
    total += s;
  }
  if (total != dim)
    sdk::fail_invalid("Split: split sizes sum to " + std::to_string(total) + ", dimension is " +
                      std::to_string(dim));
  const int64_t outer = dims_product(in, 0, axis), inner = dims_product(in, axis + 1, rank);
  int64_t col = 0;
  for (int64_t i = 0; i < n_out; ++i) {
    Shape s = in;
    s[axis] = sizes[i];
    const int64_t row = sizes[i] * inner;
    if (!ctx.node().output_name(i).empty()) {
      const sdk::Tensor y = ctx.output(i, s, x.dtype());
      if (row > 0) {
        ElementCopier c(x, y, "Split");
        for (int64_t o = 0; o < outer; ++o) c.copy(o * row, o * dim * inner + col, row);
      }
    }
    col += row;
  }
}

// ---------------------------------------------------------------- Slice

void slice(KernelContext& ctx) {
  const sdk::ConstTensor x = ctx.required_input(0);
  const Shape in = x.shape();
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> starts, ends, axes, steps;
  if (ctx.node().opset() < 10) {
    starts = ctx.node().required_ints("starts");
    ends = ctx.node().required_ints("ends");
    axes = ctx.node().attr_ints("axes");
  } else {
    starts = read_indices(ctx.required_input(1), "Slice", "starts");
    ends = read_indices(ctx.required_input(2), "Slice", "ends");
    if (const sdk::ConstTensor a = ctx.input(3); a.exists()) axes = read_indices(a, "Slice", "axes");
    if (const sdk::ConstTensor s = ctx.input(4); s.exists()) steps = read_indices(s, "Slice", "steps");
  }
  if (starts.size() != ends.size()) sdk::fail_invalid("Slice: starts and ends differ in length");
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size())
    sdk::fail_invalid("Slice: starts, ends, axes and steps differ in length");

  const Shape st = strides_of(in);
  Shape out_shape = in, out_strides = st;
  int64_t base = 0;
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t ax = normalize_axis(axes[i], rank, "Slice");
    if (seen[ax]) sdk::fail_invalid("Slice: axis " + std::to_string(ax) + " repeated");
    seen[ax] = true;
    const int64_t d = in[ax], step = steps[i];
    if (step == 0) sdk::fail_invalid("Slice: step must not be 0");
    int64_t s = starts[i], e = ends[i];
    if (s < 0) s += d;
    if (e < 0) e += d;
    int64_t count;
    if (d == 0) {
      count = 0;
    } else if (step > 0) {
      s = std::clamp<int64_t>(s, 0, d);
      e = std::clamp<int64_t>(e, 0, d);
      count = e > s ? 1 + (e - s - 1) / step : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, d - 1);
      e = std::clamp<int64_t>(e, -1, d - 1);
      // -step cannot overflow: INT64_MIN takes at most one element.
      count = s > e ? (step == std::numeric_limits<int64_t>::min() ? 1 : 1 + (s - e - 1) / (-step)) : 0;
    }
    out_shape[ax] = count;
    out_strides[ax] = count > 1 ? st[ax] * step : 0;
    if (count > 0) base += s * st[ax];
  }
  const sdk::Tensor y = ctx.output(0, out_shape, x.dtype());
  strided_copy(ElementCopier(x, y, "Slice"), out_shape, out_strides, base);
}

// ---------------------------------------------------------------- Expand, Tile

void expand(KernelContext& ctx) {
  const sdk::ConstTensor x = ctx.required_input(0);
  const Shape in = x.shape();
  const Shape target = read_indices(ctx.required_input(1), "Expand", "shape");
  const Shape out_shape = broadcast_shape({in, target}, "Expand");
  const sdk::Tensor y = ctx.output(0, out_shape, x.dtype());
  strided_copy(ElementCopier(x, y, "Expand"), out_shape, broadcast_strides(in, out_shape), 0);
}

void tile(KernelContext& ctx) {
  const sdk::ConstTensor x = ctx.required_input(0);
  const Shape in = x.shape();
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> repeats;
  if (ctx.node().opset() < 6) {  // Tile-1: scalar `tiles` along scalar `axis`
    const auto tiles = read_indices(ctx.required_input(1), "Tile", "tiles");
    const auto axis = read_indices(ctx.required_input(2), "Tile", "axis");
    if (tiles.size() != 1 || axis.size() != 1) sdk::fail_invalid("Tile: tiles and axis must be scalars");
    repeats.assign(rank, 1);
    repeats[normalize_axis(axis[0], rank, "Tile")] = tiles[0];
  } else {
    repeats = read_indices(ctx.required_input(1), "Tile", "repeats");
  }
  if (static_cast<int64_t>(repeats.size()) != rank)
    sdk::fail_invalid("Tile: repeats has " + std::to_string(repeats.size()) + " entries for rank " +
                      std::to_string(rank));
  // View the output as [r0, d0, r1, d1, ...] reading the input with stride 0
  // on the repeat dims.
  const Shape st = strides_of(in);
  Shape out_shape(rank), view, view_strides;
  for (int64_t d = 0; d < rank; ++d) {
    if (repeats[d] < 0) sdk::fail_invalid("Tile: negative repeat");
    out_shape[d] = sdk::checked_mul(in[d], repeats[d], "Tile: dimension " + std::to_string(d));
    view.insert(view.end(), {repeats[d], in[d]});
    view_strides.insert(view_strides.end(), {0, st[d]});
  }
  const sdk::Tensor y = ctx.output(0, out_shape, x.dtype());
  strided_copy(ElementCopier(x, y, "Tile"), view, view_strides, 0);
}

// ---------------------------------------------------------------- Pad

// Bytes of `value` converted to `dtype` (Pad before opset 11 takes a float
// attribute).
std::vector<char> float_as_bytes(float value, int32_t dtype) {
  std::vector<char> bytes;
  dispatch<PodTypes>(dtype, "Pad", [&](auto tag) {
    using T = decltype(tag);
    const T v = static_cast<T>(value);
    bytes.assign(reinterpret_cast<const char*>(&v), reinterpret_cast<const char*>(&v) + sizeof(T));
  });
  return bytes;
}

void pad(KernelContext& ctx) {
  const sdk::ConstTensor x = ctx.required_input(0);
  const Shape in = x.shape();
  const int64_t rank = static_cast<int64_t>(in.size());
  const int64_t opset = ctx.node().opset();
  const std::string mode = ctx.node().attr_string("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap")
    sdk::fail_invalid("Pad: unknown mode '" + mode + "'");
  std::vector<int64_t> raw;
  if (opset < 2) {
    raw = ctx.node().required_ints("paddings");
  } else if (opset < 11) {
    raw = ctx.node().required_ints("pads");
  } else {
    raw = read_indices(ctx.required_input(1), "Pad", "pads");
  }
  // Optional axes (opset 18): pads cover only the listed axes.
  std::vector<int64_t> axes;
  if (const sdk::ConstTensor a = ctx.input(3); opset >= 11 && a.exists()) {
    axes = read_indices(a, "Pad", "axes");
  } else {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  const size_t na = axes.size();
  if (raw.size() != 2 * na)
    sdk::fail_invalid("Pad: pads has " + std::to_string(raw.size()) + " entries, expected " +
                      std::to_string(2 * na));
  Shape begin(rank, 0), end(rank, 0);
  for (size_t i = 0; i < na; ++i) {
    const int64_t ax = normalize_axis(axes[i], rank, "Pad");
    begin[ax] = raw[i];
    end[ax] = raw[i + na];
  }
  Shape out_shape(rank);
  for (int64_t d = 0; d < rank; ++d) {
    out_shape[d] = sdk::checked_add(sdk::checked_add(in[d], begin[d], "Pad: dimension " + std::to_string(d)), end[d],
                                    "Pad: dimension " + std::to_string(d));
    if (out_shape[d] < 0) sdk::fail_invalid("Pad: pads make dimension " + std::to_string(d) + " negative");
    if (mode != "constant" && in[d] == 0 && out_shape[d] > 0)
      sdk::fail_invalid("Pad: cannot pad an empty dimension in " + mode + " mode");
  }
  const sdk::Tensor y = ctx.output(0, out_shape, x.dtype());
  const ElementCopier copier(x, y, "Pad");
  std::optional<ElementFiller> filler;
  if (mode == "constant") {
    const sdk::ConstTensor cv = ctx.input(2);
    if (opset >= 11 && cv.exists() && cv.size() > 0) {
      filler.emplace(cv, 0, y, "Pad");
    } else if (opset < 11 && y.dtype() != LOOM_DTYPE_STRING) {
      filler.emplace(float_as_bytes(ctx.node().attr_float("value", 0.0f), y.dtype()), y, "Pad");
    } else {
      filler.emplace(sdk::ConstTensor(), 0, y, "Pad");
    }
  }
  const Shape st = strides_of(in);
  for_each_index(out_shape, [&](int64_t o, const Shape& idx) {
    int64_t off = 0;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t i = idx[d] - begin[d];
      const int64_t n = in[d];
      if (i < 0 || i >= n) {
        if (mode == "constant") {
          filler->fill(o);
          return;
        }
        if (mode == "edge") {
          i = std::clamp<int64_t>(i, 0, n - 1);
        } else if (mode == "wrap") {
          i = ((i % n) + n) % n;
        } else if (n == 1) {
          i = 0;
        } else {  // reflect, periodic with period 2(n-1) like numpy
          const int64_t m = 2 * (n - 1);
          i = ((i % m) + m) % m;
          if (i >= n) i = m - i;
        }
      }
      off += i * st[d];
    }
    copier.copy(o, off);
  });
}

// ---------------------------------------------------------------- DepthToSpace, SpaceToDepth

void depth_to_space(KernelContext& ctx) {
  const sdk::ConstTensor x = ctx.required_input(0);
  const Shape in = x.shape();
  if (in.size() != 4) sdk::fail_invalid("DepthToSpace: input must be 4-D, got " + shape_string(in));
  const int64_t b = ctx.node().required_int("blocksize");
  if (b <= 0 || b > in[1] || in[1] % (b * b) != 0)
    sdk::fail_invalid("DepthToSpace: channels " + std::to_string(in[1]) + " not divisible by blocksize^2");
  const int64_t n = in[0], c = in[1] / (b * b), h = in[2], w = in[3];
  const std::string mode = ctx.node().attr_string("mode", "DCR");
  const sdk::Tensor y = ctx.output(0, {n, c, h * b, w * b}, x.dtype());
  const ElementCopier copier(x, y, "DepthToSpace");
  if (mode == "DCR") {
    permuted_copy(copier, {n, b, b, c, h, w}, {0, 3, 4, 1, 5, 2});
  } else if (mode == "CRD") {
    permuted_copy(copier, {n, c, b, b, h, w}, {0, 1, 4, 2, 5, 3});
  } else {
    sdk::fail_invalid("DepthToSpace: unknown mode '" + mode + "'");
  }
}

void space_to_depth(KernelContext& ctx) {
  const sdk::ConstTensor x = ctx.required_input(0);
  const Shape in = x.shape();
  if (in.size() != 4) sdk::fail_invalid("SpaceToDepth: input must be 4-D, got " + shape_string(in));
  const int64_t b = ctx.node().required_int("blocksize");
  if (b <= 0 || in[2] % b != 0 || in[3] % b != 0)
    sdk::fail_invalid("SpaceToDepth: spatial dims of " + shape_string(in) + " not divisible by blocksize");
  const int64_t n = in[0], c = in[1], h = in[2] / b, w = in[3] / b;
  const sdk::Tensor y = ctx.output(0, {n, c * b * b, h, w}, x.dtype());
  permuted_copy(ElementCopier(x, y, "SpaceToDepth"), {n, c, h, b, w, b}, {0, 3, 5, 1, 2, 4});
}

}  // namespace

void register_tensor_layout_kernels(sdk::KernelRegistry& r) {
  r.add("", "Transpose", 1, kOpen, transpose);
  r.add("", "Concat", 1, kOpen, concat);
  r.add("", "Split", 1, kOpen, split);
  r.add("", "Slice", 1, kOpen, slice);
  r.add("", "Expand", 8, kOpen, expand);
  r.add("", "Tile", 1, kOpen, tile);
  r.add("", "Pad", 1, kOpen, pad);
  r.add("", "DepthToSpace", 1, kOpen, depth_to_space);
  r.add("", "SpaceToDepth", 1, kOpen, space_to_depth);
}

}  // namespace loom::reference
