// The data-movement ops on the CUDA EP, part two: Slice, Pad, the gathers
// (Gather, GatherElements, GatherND), and the generators Range and
// ConstantOfShape. Shape operands (Slice starts / ends / axes / steps, Pad
// pads / value / axes, Range's scalars, ConstantOfShape's shape) are read
// on the host. Gather indices live on the device, so a kernel cannot
// reject one out of range: such an index reads zero bytes (the ops check
// constant indices on the host and fail as ONNX asks).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/movement_common.h"

namespace loom::cuda {
namespace {

constexpr int kOpen = LOOM_OPSET_OPEN_END;
const std::vector<int32_t> kIndexTypes = {LOOM_DTYPE_INT32, LOOM_DTYPE_INT64};

// --- Slice ---

class SliceKernel {
 public:
  SliceKernel(const sdk::Node& node, const EpContext&) : opset_(node.opset()) {
    if (opset_ < 10) {
      starts_ = node.required_ints("starts");
      ends_ = node.required_ints("ends");
      axes_ = node.attr_ints("axes");
    }
  }
  void compute(sdk::KernelContext& ctx) const {
    sdk::ConstTensor x = ctx.required_input(0);
    const std::vector<int64_t> in = x.shape();
    const int64_t rank = static_cast<int64_t>(in.size());
    require_rank_fits(in.size(), "Slice");
    std::vector<int64_t> starts = starts_, ends = ends_, axes = axes_, steps;
    if (opset_ >= 10) {
      starts = required_host_ints(ctx, 1, "Slice", "starts");
      ends = required_host_ints(ctx, 2, "Slice", "ends");
      if (ctx.input(3).exists()) axes = required_host_ints(ctx, 3, "Slice", "axes");
      if (ctx.input(4).exists()) steps = required_host_ints(ctx, 4, "Slice", "steps");
    }
    if (starts.size() != ends.size()) fail_op("Slice", "starts and ends differ in length");
    if (axes.empty())
      for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (axes.size() != starts.size() || steps.size() != starts.size())
      fail_op("Slice", "starts, ends, axes and steps differ in length");
    const std::vector<int64_t> st = contiguous_strides(in);
    std::vector<int64_t> out = in, strides = st;
    int64_t base = 0;
    std::vector<bool> seen(in.size(), false);
    for (size_t i = 0; i < axes.size(); ++i) {
      const size_t ax = static_cast<size_t>(normalize_axis(axes[i], rank, "Slice"));
      if (seen[ax]) fail_op("Slice", "axis " + std::to_string(ax) + " repeated");
      seen[ax] = true;
      if (steps[i] == 0) fail_op("Slice", "step must not be 0");
      const SliceAxis r = slice_axis(starts[i], ends[i], steps[i], in[ax]);
      out[ax] = r.count;
      // count > 1 bounds |step| by the dim, so the product stays in range.
      strides[ax] = r.count > 1 ? st[ax] * steps[i] : 0;
      base += r.start * st[ax];
    }
    sdk::Tensor y = ctx.output(0, out, x.dtype());
    const int64_t n = y.size();
    if (n == 0) return;
    const size_t bytes = element_bytes(x.dtype());
    const char* first = static_cast<const char*>(x.raw_data()) + static_cast<size_t>(base) * bytes;
    check_movement(launch_strided_copy(bytes, first, compact_map(map_of(out, strides)), y.raw_mutable_data(), n,
                                       stream_of(ctx)),
                   "Slice", x.dtype());
  }

 private:
  int64_t opset_;
  std::vector<int64_t> starts_, ends_, axes_;
};

// --- Pad ---

PadMode pad_mode(const std::string& mode) {
  if (mode == "constant") return PadMode::kConstant;
  if (mode == "reflect") return PadMode::kReflect;
  if (mode == "edge") return PadMode::kEdge;
  if (mode == "wrap") return PadMode::kWrap;
  throw sdk::Error("cuda Pad: unknown mode '" + mode + "'", LOOM_STATUS_INVALID_ARGUMENT);
}

std::string pad_supported(const sdk::Node& node) {
  const std::string mode = node.attr_string("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap") return "unknown mode '" + mode + "'";
  return rank_fits(node);
}

class PadKernel {
 public:
  PadKernel(const sdk::Node& node, const EpContext&)
      : opset_(node.opset()), mode_(pad_mode(node.attr_string("mode", "constant"))),
        value_(node.attr_float("value", 0.f)) {
    if (opset_ < 11) pads_ = node.required_ints("pads");
  }
  void compute(sdk::KernelContext& ctx) const {
    sdk::ConstTensor x = ctx.required_input(0);
    const std::vector<int64_t> in = x.shape();
    const int64_t rank = static_cast<int64_t>(in.size());
    require_rank_fits(in.size(), "Pad");
    const std::vector<int64_t> raw = opset_ < 11 ? pads_ : required_host_ints(ctx, 1, "Pad", "pads");
    std::vector<int64_t> axes;
    if (opset_ >= 11 && ctx.input(3).exists()) axes = required_host_ints(ctx, 3, "Pad", "axes");
    else
      for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
    const size_t na = axes.size();
    if (raw.size() != 2 * na)
      fail_op("Pad", "pads has " + std::to_string(raw.size()) + " entries, expected " + std::to_string(2 * na));
    PadMap map;
    map.rank = static_cast<int>(rank);
    map.mode = mode_;
    std::vector<int64_t> begin(in.size(), 0), end(in.size(), 0);
    for (size_t i = 0; i < na; ++i) {
      const size_t ax = static_cast<size_t>(normalize_axis(axes[i], rank, "Pad"));
      begin[ax] = raw[i];
      end[ax] = raw[i + na];
    }
    const std::vector<int64_t> st = contiguous_strides(in);
    std::vector<int64_t> out(in.size());
    for (size_t d = 0; d < in.size(); ++d) {
      out[d] = sdk::checked_add(sdk::checked_add(in[d], begin[d], "cuda Pad output"), end[d], "cuda Pad output");
      if (out[d] < 0) fail_op("Pad", "pads make dimension " + std::to_string(d) + " negative");
      if (mode_ != PadMode::kConstant && in[d] == 0 && out[d] > 0)
        fail_op("Pad", "cannot pad an empty dimension except in constant mode");
      map.out_dims[d] = out[d];
      map.in_dims[d] = in[d];
      map.in_strides[d] = st[d];
      map.begin[d] = begin[d];
    }
    sdk::Tensor y = ctx.output(0, out, x.dtype());
    const int64_t n = y.size();
    if (n == 0) return;
    check_movement(launch_pad(element_bytes(x.dtype()), x.raw_data(), map, pad_value(ctx, x.dtype()),
                              y.raw_mutable_data(), n, stream_of(ctx)),
                   "Pad", x.dtype());
  }

 private:
  // The bits of the constant: input 2 (opset 11, same type as the data),
  // the `value` attribute converted (before), zero without either.
  uint64_t pad_value(const sdk::KernelContext& ctx, int32_t dtype) const {
    if (mode_ != PadMode::kConstant) return 0;
    if (opset_ < 11) return value_pattern(value_, dtype);
    sdk::ConstTensor v = host_input(ctx, 2);
    if (!v.exists() || v.size() == 0) return 0;
    if (v.dtype() != dtype) fail_op("Pad", "constant_value type differs from the data's");
    return element_pattern(v, 0);
  }

  int64_t opset_;
  PadMode mode_;
  float value_;
  std::vector<int64_t> pads_;
};

// --- Gather, GatherElements, GatherND ---

// The range of constant indices, checked against the dim at run time.
struct ConstantIndices {
  bool known = false;
  int64_t min = 0, max = 0;

  explicit ConstantIndices(const sdk::ConstTensor& t) {
    if (!t.exists() || t.size() == 0 || (t.dtype() != LOOM_DTYPE_INT32 && t.dtype() != LOOM_DTYPE_INT64)) return;
    const std::vector<int64_t> v = t.to_int64_vector();
    known = true;
    min = *std::min_element(v.begin(), v.end());
    max = *std::max_element(v.begin(), v.end());
  }
  void check(int64_t dim, const std::string& op) const {
    if (known && (min < -dim || max >= dim))
      fail_op(op, "index " + std::to_string(min < -dim ? min : max) + " is out of range for a dimension of " +
                      std::to_string(dim));
  }
};

void check_index_type(const sdk::ConstTensor& indices, const std::string& op) {
  if (indices.dtype() != LOOM_DTYPE_INT32 && indices.dtype() != LOOM_DTYPE_INT64)
    fail_op(op, "indices must be int32 or int64, got " + sdk::dtype_name(indices.dtype()));
}

class GatherKernel {
 public:
  GatherKernel(const sdk::Node& node, const EpContext&)
      : axis_(node.attr_int("axis", 0)), constant_(node.input_constant(1)) {}
  void compute(sdk::KernelContext& ctx) const {
    sdk::ConstTensor data = ctx.required_input(0), indices = ctx.required_input(1);
    check_index_type(indices, "Gather");
    const std::vector<int64_t> ds = data.shape();
    const size_t axis = static_cast<size_t>(normalize_axis(axis_, static_cast<int64_t>(ds.size()), "Gather"));
    std::vector<int64_t> out(ds.begin(), ds.begin() + static_cast<std::ptrdiff_t>(axis));
    for (int64_t d : indices.shape()) out.push_back(d);
    out.insert(out.end(), ds.begin() + static_cast<std::ptrdiff_t>(axis) + 1, ds.end());
    constant_.check(ds[axis], "Gather");
    const int64_t n = sdk::checked_element_count(out, "cuda Gather output");
    sdk::Tensor y = ctx.output(0, out, data.dtype());
    if (n == 0) return;
    GatherShape shape;
    shape.dim = ds[axis];
    shape.count = indices.size();
    shape.inner = product(ds, axis + 1, ds.size(), "cuda Gather");
    check_movement(launch_gather(element_bytes(data.dtype()), data.raw_data(), indices.dtype(), indices.raw_data(),
                                 shape, y.raw_mutable_data(), n, stream_of(ctx)),
                   "Gather", data.dtype());
  }

 private:
  int64_t axis_;
  ConstantIndices constant_;
};

class GatherElementsKernel {
 public:
  GatherElementsKernel(const sdk::Node& node, const EpContext&)
      : axis_(node.attr_int("axis", 0)), constant_(node.input_constant(1)) {}
  void compute(sdk::KernelContext& ctx) const {
    sdk::ConstTensor data = ctx.required_input(0), indices = ctx.required_input(1);
    check_index_type(indices, "GatherElements");
    const std::vector<int64_t> ds = data.shape(), is = indices.shape();
    if (is.size() != ds.size())
      fail_op("GatherElements", "indices rank " + std::to_string(is.size()) + " differs from data rank " +
                                    std::to_string(ds.size()));
    require_rank_fits(ds.size(), "GatherElements");
    const size_t axis =
        static_cast<size_t>(normalize_axis(axis_, static_cast<int64_t>(ds.size()), "GatherElements"));
    for (size_t d = 0; d < ds.size(); ++d)
      if (d != axis && is[d] > ds[d])
        fail_op("GatherElements", "indices shape " + shape_text(is) + " exceeds data shape " + shape_text(ds));
    constant_.check(ds[axis], "GatherElements");
    sdk::Tensor y = ctx.output(0, is, data.dtype());
    const int64_t n = y.size();
    if (n == 0) return;
    std::vector<int64_t> st = contiguous_strides(ds);
    GatherElementsMap map;
    map.axis_dim = ds[axis];
    map.axis_stride = st[axis];
    st[axis] = 0;
    map.map = map_of(is, st);
    check_movement(launch_gather_elements(element_bytes(data.dtype()), data.raw_data(), indices.dtype(),
                                          indices.raw_data(), map, y.raw_mutable_data(), n, stream_of(ctx)),
                   "GatherElements", data.dtype());
  }

 private:
  int64_t axis_;
  ConstantIndices constant_;
};

class GatherNdKernel {
 public:
  GatherNdKernel(const sdk::Node& node, const EpContext&) : batch_dims_(node.attr_int("batch_dims", 0)) {}
  void compute(sdk::KernelContext& ctx) const {
    const std::string op = "GatherND";
    sdk::ConstTensor data = ctx.required_input(0), indices = ctx.required_input(1);
    check_index_type(indices, op);
    const std::vector<int64_t> ds = data.shape(), is = indices.shape();
    const int64_t r = static_cast<int64_t>(ds.size()), q = static_cast<int64_t>(is.size());
    const int64_t bd = batch_dims_;
    if (q < 1) fail_op(op, "indices must have rank >= 1");
    if (bd < 0 || bd >= std::min(r, q)) fail_op(op, "invalid batch_dims " + std::to_string(bd));
    for (int64_t d = 0; d < bd; ++d)
      if (ds[static_cast<size_t>(d)] != is[static_cast<size_t>(d)]) fail_op(op, "batch dims of data and indices differ");
    const int64_t k = is.back();
    if (k < 1 || k > r - bd)
      fail_op(op, "last indices dimension " + std::to_string(k) + " is invalid for data rank " + std::to_string(r));
    if (k > kMaxRank)
      throw sdk::Error("cuda GatherND: index tuples longer than " + std::to_string(kMaxRank),
                       LOOM_STATUS_NOT_IMPLEMENTED);
    const size_t ub = static_cast<size_t>(bd), uk = static_cast<size_t>(k);
    std::vector<int64_t> out(is.begin(), is.end() - 1);
    out.insert(out.end(), ds.begin() + static_cast<std::ptrdiff_t>(ub + uk), ds.end());
    const int64_t n = sdk::checked_element_count(out, "cuda GatherND output");
    sdk::Tensor y = ctx.output(0, out, data.dtype());
    if (n == 0) return;
    const std::vector<int64_t> st = contiguous_strides(ds);
    GatherNdMap map;
    map.k = static_cast<int>(k);
    map.slice = product(ds, ub + uk, ds.size(), "cuda GatherND");
    map.batch_stride = product(ds, ub, ds.size(), "cuda GatherND");
    map.tuples = product(is, ub, is.size() - 1, "cuda GatherND");
    for (size_t j = 0; j < uk; ++j) {
      map.dims[j] = ds[ub + j];
      map.strides[j] = st[ub + j];
    }
    check_movement(launch_gather_nd(element_bytes(data.dtype()), data.raw_data(), indices.dtype(), indices.raw_data(),
                                    map, y.raw_mutable_data(), n, stream_of(ctx)),
                   op, data.dtype());
  }

 private:
  int64_t batch_dims_;
};

// --- Range, ConstantOfShape ---

const std::vector<int32_t> kRangeTypes = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_DOUBLE, LOOM_DTYPE_INT16, LOOM_DTYPE_INT32,
                                          LOOM_DTYPE_INT64};

class RangeKernel {
 public:
  RangeKernel(const sdk::Node&, const EpContext&) {}
  void compute(sdk::KernelContext& ctx) const {
    sdk::ConstTensor s = host_input(ctx, 0), l = host_input(ctx, 1), d = host_input(ctx, 2);
    if (!s.exists() || !l.exists() || !d.exists()) fail_op("Range", "start, limit and delta are required");
    if (s.size() != 1 || l.size() != 1 || d.size() != 1) fail_op("Range", "start, limit and delta must be scalars");
    const int32_t dtype = s.dtype();
    if (l.dtype() != dtype || d.dtype() != dtype) fail_op("Range", "input types differ");
    RangeArgs a;
    int64_t n = 0;
    if (dtype == LOOM_DTYPE_FLOAT || dtype == LOOM_DTYPE_DOUBLE) {
      double limit;
      if (dtype == LOOM_DTYPE_FLOAT) {
        a.start = static_cast<const float*>(s.raw_data())[0];
        limit = static_cast<const float*>(l.raw_data())[0];
        a.delta = static_cast<const float*>(d.raw_data())[0];
      } else {
        a.start = static_cast<const double*>(s.raw_data())[0];
        limit = static_cast<const double*>(l.raw_data())[0];
        a.delta = static_cast<const double*>(d.raw_data())[0];
      }
      if (a.delta == 0) fail_op("Range", "delta must not be zero");
      const double count = std::ceil((limit - a.start) / a.delta);
      if (!std::isfinite(count) || count > 9.0e15) fail_op("Range", "element count is not finite or too large");
      n = static_cast<int64_t>(count);
    } else if (dtype == LOOM_DTYPE_INT16 || dtype == LOOM_DTYPE_INT32 || dtype == LOOM_DTYPE_INT64) {
      a.start_i = s.to_int64_vector()[0];
      const int64_t limit = l.to_int64_vector()[0];
      a.delta_i = d.to_int64_vector()[0];
      if (a.delta_i == 0) fail_op("Range", "delta must not be zero");
      int64_t span = 0;
      if (__builtin_sub_overflow(limit, a.start_i, &span)) fail_op("Range", "limit - start overflows");
      n = span / a.delta_i + ((span % a.delta_i != 0) && ((span < 0) == (a.delta_i < 0)) ? 1 : 0);
    } else {
      throw sdk::Error("cuda Range: no kernel for " + sdk::dtype_name(dtype), LOOM_STATUS_NOT_IMPLEMENTED);
    }
    n = std::max<int64_t>(n, 0);
    sdk::Tensor y = ctx.output(0, {n}, dtype);
    check_movement(launch_range(dtype, a, y.raw_mutable_data(), n, stream_of(ctx)), "Range", dtype);
  }
};

class ConstantOfShapeKernel {
 public:
  ConstantOfShapeKernel(const sdk::Node& node, const EpContext&) {
    sdk::ConstTensor v = node.attr_tensor("value");
    if (!v.exists()) return;  // float zeros
    if (v.size() != 1) fail_op("ConstantOfShape", "value must hold exactly one element");
    dtype_ = v.dtype();
    pattern_ = element_pattern(v, 0);
  }
  void compute(sdk::KernelContext& ctx) const {
    const std::vector<int64_t> shape = required_host_ints(ctx, 0, "ConstantOfShape", "shape");
    const int64_t n = sdk::checked_element_count(shape, "cuda ConstantOfShape output");
    sdk::Tensor y = ctx.output(0, shape, dtype_);
    check_movement(launch_fill(element_bytes(dtype_), pattern_, y.raw_mutable_data(), n, stream_of(ctx)),
                   "ConstantOfShape", dtype_);
  }

 private:
  int32_t dtype_ = LOOM_DTYPE_FLOAT;
  uint64_t pattern_ = 0;
};

std::string constant_of_shape_supported(const sdk::Node& node) {
  sdk::ConstTensor v = node.attr_tensor("value");
  if (!v.exists()) return {};
  if (std::find(kAllFixedTypes.begin(), kAllFixedTypes.end(), v.dtype()) == kAllFixedTypes.end())
    return "value of type " + sdk::dtype_name(v.dtype());
  if (v.size() != 1) return "value must hold exactly one element";
  return {};
}

}  // namespace

void register_slicing_kernels(KernelTable& t) {
  const std::vector<int32_t>& all = kAllFixedTypes;
  t.add<SliceKernel>("", "Slice", 1, 9, {{"T", all}}, rank_fits);
  t.add<SliceKernel>("", "Slice", 10, kOpen, {{"T", all}, {"Tind", kIndexTypes}}, rank_fits)
      .input_on_host(1)
      .input_on_host(2)
      .input_on_host(3)
      .input_on_host(4);
  t.add<PadKernel>("", "Pad", 2, 10, {{"T", all}}, pad_supported);
  t.add<PadKernel>("", "Pad", 11, kOpen, {{"T", all}}, pad_supported).input_on_host(1).input_on_host(2).input_on_host(3);
  t.add<GatherKernel>("", "Gather", 1, kOpen, {{"T", all}, {"Tind", kIndexTypes}});
  t.add<GatherElementsKernel>("", "GatherElements", 11, kOpen, {{"T", all}, {"Tind", kIndexTypes}}, rank_fits);
  t.add<GatherNdKernel>("", "GatherND", 11, kOpen, {{"T", all}});
  t.add<RangeKernel>("", "Range", 11, kOpen, {{"T", kRangeTypes}}).input_on_host(0).input_on_host(1).input_on_host(2);
  t.add<ConstantOfShapeKernel>("", "ConstantOfShape", 9, kOpen, {{"T1", {LOOM_DTYPE_INT64}}},
                               constant_of_shape_supported)
      .input_on_host(0);
}

}  // namespace loom::cuda
