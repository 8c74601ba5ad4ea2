// Resize (opsets 10, 11-12, 13+, with the opset 18 `axes` attribute) and
// Upsample (7-9) on the CUDA EP, following the reference EP
// (plugins/reference/kernels/tensor_resize.cpp): the output shape and the
// per-axis scales are computed here as the reference does; the taps of each
// axis coordinate are computed on the device into scratch memory
// (kernels/resize_index.h), then the output. Nearest copies by element size
// (every fixed-size type); linear and cubic interpolate float, float16 and
// double. antialias = 1 and keep_aspect_ratio_policy other than stretch are
// declined.
#include <cmath>
#include <string>
#include <vector>

#include "kernels/movement_common.h"

namespace loom::cuda {
namespace {

constexpr int kOpen = LOOM_OPSET_OPEN_END;

bool is_float_type(int32_t dtype) {
  return dtype == LOOM_DTYPE_FLOAT || dtype == LOOM_DTYPE_FLOAT16 || dtype == LOOM_DTYPE_DOUBLE;
}

bool legacy_node(const sdk::Node& node) { return node.op_type() == "Upsample" || node.opset() < 11; }

// Parses the node's attributes; an empty `why` when supported.
ResizeAttrs parse_attrs(const sdk::Node& node, std::string& why) {
  ResizeAttrs a;
  const bool legacy = legacy_node(node);
  const std::string mode = node.attr_string("mode", "nearest");
  if (mode == "nearest") a.mode = ResizeMode::kNearest;
  else if (mode == "linear" || mode == "bilinear") a.mode = ResizeMode::kLinear;
  else if (mode == "cubic" && !legacy) a.mode = ResizeMode::kCubic;
  else why = "unsupported mode '" + mode + "'";
  if (legacy) {
    a.coord = ResizeCoord::kAsymmetric;
    a.nearest = NearestRound::kSimple;
  } else {
    const std::string c = node.attr_string("coordinate_transformation_mode", "half_pixel");
    if (c == "half_pixel") a.coord = ResizeCoord::kHalfPixel;
    else if (c == "half_pixel_symmetric") a.coord = ResizeCoord::kHalfPixelSymmetric;
    else if (c == "pytorch_half_pixel") a.coord = ResizeCoord::kPytorchHalfPixel;
    else if (c == "align_corners") a.coord = ResizeCoord::kAlignCorners;
    else if (c == "asymmetric") a.coord = ResizeCoord::kAsymmetric;
    else if (c == "tf_half_pixel_for_nn") a.coord = ResizeCoord::kTfHalfPixelForNn;
    else if (c == "tf_crop_and_resize") a.coord = ResizeCoord::kTfCropAndResize;
    else why = "unknown coordinate_transformation_mode '" + c + "'";
    const std::string n = node.attr_string("nearest_mode", "round_prefer_floor");
    if (n == "round_prefer_floor") a.nearest = NearestRound::kRoundPreferFloor;
    else if (n == "round_prefer_ceil") a.nearest = NearestRound::kRoundPreferCeil;
    else if (n == "floor") a.nearest = NearestRound::kFloor;
    else if (n == "ceil") a.nearest = NearestRound::kCeil;
    else why = "unknown nearest_mode '" + n + "'";
  }
  a.cubic_a = node.attr_float("cubic_coeff_a", -0.75f);
  a.exclude_outside = node.attr_int("exclude_outside", 0) != 0;
  if (node.attr_int("antialias", 0) != 0) why = "antialias = 1 is not supported";
  const std::string policy = node.attr_string("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch") why = "keep_aspect_ratio_policy '" + policy + "' is not supported";
  return a;
}

std::string resize_supported(const sdk::Node& node) {
  std::string why;
  const ResizeAttrs a = parse_attrs(node, why);
  if (!why.empty()) return why;
  const int32_t dtype = node.input_dtype(0);
  const bool computes = a.mode != ResizeMode::kNearest || a.coord == ResizeCoord::kTfCropAndResize;
  if (computes && dtype != LOOM_DTYPE_UNDEFINED && !is_float_type(dtype))
    return "interpolation (or tf_crop_and_resize extrapolation) of " + sdk::dtype_name(dtype);
  return rank_fits(node);
}

class ResizeKernel {
 public:
  ResizeKernel(const sdk::Node& node, const EpContext&)
      : op_(node.op_type()), upsample_(node.op_type() == "Upsample"), legacy_(legacy_node(node)),
        opset_(node.opset()), extrapolation_(node.attr_float("extrapolation_value", 0.f)),
        axes_attr_(node.attr_ints("axes")) {
    std::string why;
    attrs_ = parse_attrs(node, why);
    if (!why.empty()) fail_op(op_, why);
    if (upsample_ && opset_ < 9) scales_attr_ = node.attr_floats("scales");
  }

  void compute(sdk::KernelContext& ctx) const {
    sdk::ConstTensor x = ctx.required_input(0);
    const std::vector<int64_t> in = x.shape();
    const int64_t rank = static_cast<int64_t>(in.size());
    require_rank_fits(in.size(), op_);
    std::vector<size_t> axes;
    if (axes_attr_.empty())
      for (size_t d = 0; d < in.size(); ++d) axes.push_back(d);
    else
      for (int64_t a : axes_attr_) axes.push_back(static_cast<size_t>(normalize_axis(a, rank, op_)));

    std::vector<double> scales_in, roi;
    std::vector<int64_t> sizes_in;
    if (upsample_ && opset_ < 9) {
      scales_in.assign(scales_attr_.begin(), scales_attr_.end());
    } else if (legacy_) {
      scales_in = host_doubles(ctx, 1, op_);
    } else {
      roi = host_doubles(ctx, 1, op_);
      scales_in = host_doubles(ctx, 2, op_);
      if (ctx.input(3).exists() && ctx.input(3).size() > 0) sizes_in = required_host_ints(ctx, 3, op_, "sizes");
    }
    if (!scales_in.empty() && !sizes_in.empty()) fail_op(op_, "only one of scales and sizes may be given");
    if (scales_in.empty() && sizes_in.empty()) fail_op(op_, "one of scales and sizes must be given");

    ResizeGeometry g;
    g.rank = static_cast<int>(rank);
    std::vector<int64_t> out = in;
    for (size_t d = 0; d < in.size(); ++d) {
      g.scale[d] = 1.0;
      g.roi_start[d] = 0.0;
      g.roi_end[d] = 1.0;
    }
    const size_t na = axes.size();
    if (!scales_in.empty()) {
      if (scales_in.size() != na)
        fail_op(op_, "scales has " + std::to_string(scales_in.size()) + " entries, expected " + std::to_string(na));
      for (size_t i = 0; i < na; ++i) {
        const double len = std::floor(scales_in[i] * static_cast<double>(in[axes[i]]));
        if (!(scales_in[i] > 0) || !(len < 9.0e15)) fail_op(op_, "scales must be positive and finite");
        g.scale[axes[i]] = scales_in[i];
        out[axes[i]] = static_cast<int64_t>(len);
      }
    } else {
      if (sizes_in.size() != na)
        fail_op(op_, "sizes has " + std::to_string(sizes_in.size()) + " entries, expected " + std::to_string(na));
      for (size_t i = 0; i < na; ++i) {
        if (sizes_in[i] < 0) fail_op(op_, "negative size");
        const size_t ax = axes[i];
        out[ax] = sizes_in[i];
        g.scale[ax] = in[ax] == 0 ? 1.0 : static_cast<double>(sizes_in[i]) / static_cast<double>(in[ax]);
      }
    }
    if (attrs_.coord == ResizeCoord::kTfCropAndResize) {  // roi: [starts..., ends...] over the axes
      if (roi.size() != 2 * na)
        fail_op(op_, "roi has " + std::to_string(roi.size()) + " entries, expected " + std::to_string(2 * na));
      for (size_t i = 0; i < na; ++i) {
        g.roi_start[axes[i]] = roi[i];
        g.roi_end[axes[i]] = roi[i + na];
      }
    }
    for (size_t d = 0; d < in.size(); ++d)
      if (in[d] == 0 && out[d] > 0) fail_op(op_, "cannot resize an empty dimension");

    const int64_t n = sdk::checked_element_count(out, "cuda " + op_ + " output");
    sdk::Tensor y = ctx.output(0, out, x.dtype());
    if (n == 0) return;
    const std::vector<int64_t> st = contiguous_strides(in);
    int64_t tap_count = 0;
    for (size_t d = 0; d < in.size(); ++d) {
      g.in_dims[d] = in[d];
      g.in_strides[d] = st[d];
      g.out_dims[d] = out[d];
      g.tap_offset[d] = tap_count;
      tap_count = sdk::checked_add(tap_count, out[d], "cuda " + op_ + " taps");
    }
    run(ctx, x, y, g, tap_count, n);
  }

 private:
  void run(const sdk::KernelContext& ctx, const sdk::ConstTensor& x, const sdk::Tensor& y, const ResizeGeometry& g,
           int64_t tap_count, int64_t n) const {
    const cudaStream_t s = stream_of(ctx);
    const int64_t tap_bytes =
        sdk::checked_mul(tap_count, static_cast<int64_t>(sizeof(ResizeTap)), "cuda " + op_ + " taps");
    auto* taps = static_cast<ResizeTap*>(stream_resources(ctx).scratch(static_cast<size_t>(tap_bytes), 0));
    check(launch_resize_taps(attrs_, g, taps, tap_count, s), (op_ + " taps launch").c_str());
    const int32_t dtype = x.dtype();
    if (attrs_.mode == ResizeMode::kNearest) {
      const uint64_t fill =
          attrs_.coord == ResizeCoord::kTfCropAndResize ? value_pattern(extrapolation_, dtype) : 0;
      check_movement(
          launch_resize_nearest(element_bytes(dtype), g, taps, x.raw_data(), fill, y.raw_mutable_data(), n, s), op_,
          dtype);
      return;
    }
    check_movement(
        launch_resize_interpolate(dtype, g, taps, x.raw_data(), extrapolation_, y.raw_mutable_data(), n, s), op_,
        dtype);
  }

  std::string op_;
  bool upsample_, legacy_;
  int64_t opset_;
  float extrapolation_;
  std::vector<int64_t> axes_attr_;
  std::vector<float> scales_attr_;
  ResizeAttrs attrs_;
};

}  // namespace

void register_resize_kernels(KernelTable& t) {
  const std::vector<int32_t>& all = kAllFixedTypes;
  t.add<ResizeKernel>("", "Upsample", 7, 8, {{"T", all}}, resize_supported);
  t.add<ResizeKernel>("", "Upsample", 9, 9, {{"T", all}}, resize_supported).input_on_host(1);
  t.add<ResizeKernel>("", "Resize", 10, 10, {{"T", all}}, resize_supported).input_on_host(1);
  t.add<ResizeKernel>("", "Resize", 11, kOpen, {{"T1", all}}, resize_supported)
      .input_on_host(1)
      .input_on_host(2)
      .input_on_host(3);
}

}  // namespace loom::cuda
