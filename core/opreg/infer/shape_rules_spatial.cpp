// Ops on spatial dims beyond plain windows: quantized and integer
// convolutions, ConvTranspose, Resize, Pad, DepthToSpace, SpaceToDepth.
#include <cmath>
#include <cstdint>

#include "opreg/infer/shape_rules.h"
#include "opreg/infer/window_shapes.h"

namespace loom::opreg {
namespace {

using C = ShapeContext;


// QLinearConv (x, x_scale, x_zero_point, w, ...) and ConvInteger (x, w, ...).
void integer_conv(const ir::Node& n, C& c) {
  auto x = c.shape(C::input(n, 0));
  if (!x) return;
  auto out = window_output_shape(n, *x, c.shape(C::input(n, n.op_type == "QLinearConv" ? 3 : 1)));
  if (out) c.set(n.outputs[0], n.op_type == "ConvInteger" ? DType::kInt32 : DType::kUndefined, *out);
}

// ConvTranspose: output_shape when given, else
// stride * (in - 1) + output_padding + (kernel - 1) * dilation + 1 - pads.
void conv_transpose(const ir::Node& n, C& c) {
  auto x = c.shape(C::input(n, 0));
  auto w = c.shape(C::input(n, 1));
  if (!x || !w || x->size() < 3 || w->size() != x->size()) return;
  const size_t spatial = x->size() - 2;
  const int64_t group = attr_int(n, "group", 1);
  Shape out = {(*x)[0], unknown_dim()};
  if (int64_t ch = 0; (*w)[1].value >= 0 && group > 0 && mul((*w)[1].value, group, &ch)) out[1] = known_dim(ch);
  std::vector<int64_t> kernel = attr_ints(n, "kernel_shape"), strides = attr_ints(n, "strides"),
                       dilations = attr_ints(n, "dilations"), pads = attr_ints(n, "pads"),
                       output_padding = attr_ints(n, "output_padding"), output_shape = attr_ints(n, "output_shape");
  if (kernel.empty())
    for (size_t i = 0; i < spatial; ++i) kernel.push_back((*w)[i + 2].value);
  if (strides.empty()) strides.assign(spatial, 1);
  if (dilations.empty()) dilations.assign(spatial, 1);
  if (pads.empty()) pads.assign(2 * spatial, 0);
  if (output_padding.empty()) output_padding.assign(spatial, 0);
  if (kernel.size() != spatial || strides.size() != spatial || dilations.size() != spatial ||
      pads.size() != 2 * spatial || output_padding.size() != spatial)
    return;
  if (!output_shape.empty()) {
    if (output_shape.size() != spatial) return;
    for (int64_t d : output_shape) out.push_back(d >= 0 ? known_dim(d) : unknown_dim());
    c.set(n.outputs[0], c.dtype_of(C::input(n, 0)), out);
    return;
  }
  const ir::Attribute* pad_mode = n.find_attribute("auto_pad");
  const bool same = pad_mode != nullptr && (pad_mode->s == "SAME_UPPER" || pad_mode->s == "SAME_LOWER");
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t in = (*x)[i + 2].value, k = kernel[i], s = strides[i], d = dilations[i];
    int64_t v = 0, extent = 0;
    const bool ok = in >= 0 && k > 0 && s > 0 && d > 0 &&
                    (same ? mul(in, s, &v)
                          : mul(s, in - 1, &v) && add(v, output_padding[i], &v) && mul(k - 1, d, &extent) &&
                                add(extent, 1, &extent) && add(v, extent, &v) && sub(v, pads[i], &v) &&
                                sub(v, pads[i + spatial], &v));
    out.push_back(ok && v >= 0 ? known_dim(v) : unknown_dim());
  }
  c.set(n.outputs[0], c.dtype_of(C::input(n, 0)), out);
}

// Resize (opset 11 on: roi, scales, sizes inputs) with constant sizes, or
// constant scales (floor(in * scale)); the axes attribute and aspect-ratio
// policies are left to ONNX's inference.
void resize(const ir::Node& n, C& c) {
  auto x = c.shape(C::input(n, 0));
  if (!x) return;
  // Whatever sizes it, the output keeps the input's rank.
  c.set(n.outputs[0], c.dtype_of(C::input(n, 0)), Shape(x->size(), unknown_dim()));
  if (n.opset < 11 || n.find_attribute("axes") != nullptr) return;
  const ir::Attribute* policy = n.find_attribute("keep_aspect_ratio_policy");
  if (policy != nullptr && policy->s != "stretch") return;
  const ir::Attribute* mode = n.find_attribute("coordinate_transformation_mode");
  if (mode != nullptr && mode->s == "tf_crop_and_resize") return;  // the roi sizes the output
  Shape out;
  if (auto sizes = c.const_ints(C::input(n, 3)); sizes && !sizes->empty()) {
    if (sizes->size() != x->size()) return;
    for (int64_t d : *sizes) out.push_back(d >= 0 ? known_dim(d) : unknown_dim());
  } else if (auto scales = c.const_floats(C::input(n, 2)); scales && !scales->empty()) {
    if (scales->size() != x->size()) return;
    for (size_t i = 0; i < x->size(); ++i) {
      const double v = std::floor(static_cast<double>((*x)[i].value) * static_cast<double>((*scales)[i]));
      if ((*scales)[i] == 1.0f) out.push_back((*x)[i]);
      else if ((*x)[i].value >= 0 && v >= 0 && v < 9.0e18) out.push_back(known_dim(static_cast<int64_t>(v)));
      else out.push_back(unknown_dim());
    }
  } else {
    return;
  }
  c.set(n.outputs[0], c.dtype_of(C::input(n, 0)), out);
}

// Pad: pads from input 1 (opset 11 on) or the attribute, over all axes or
// input 3's.
void pad(const ir::Node& n, C& c) {
  auto x = c.shape(C::input(n, 0));
  if (!x) return;
  // Whatever the pads, the output keeps the input's rank.
  c.set(n.outputs[0], c.dtype_of(C::input(n, 0)), Shape(x->size(), unknown_dim()));
  std::optional<std::vector<int64_t>> pads =
      n.opset >= 11 ? c.const_ints(C::input(n, 1)) : std::optional<std::vector<int64_t>>(attr_ints(n, "pads"));
  if (!pads) return;
  std::vector<int64_t> axes;
  if (!C::input(n, 3).empty()) {
    auto a = c.const_ints(C::input(n, 3));
    if (!a) return;
    axes = *a;
  } else {
    for (size_t i = 0; i < x->size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (pads->size() != 2 * axes.size()) return;
  Shape out = *x;
  for (size_t k = 0; k < axes.size(); ++k) {
    auto a = normalize_axis(axes[k], x->size());
    if (!a) return;
    int64_t v = out[*a].value;
    if (v >= 0 && add(v, (*pads)[k], &v) && add(v, (*pads)[k + axes.size()], &v) && v >= 0) out[*a] = known_dim(v);
    else out[*a] = unknown_dim();
  }
  c.set(n.outputs[0], c.dtype_of(C::input(n, 0)), out);
}

void depth_space(const ir::Node& n, C& c) {
  auto x = c.shape(C::input(n, 0));
  const int64_t b = attr_int(n, "blocksize", 0);
  if (!x || x->size() != 4 || b <= 0) return;
  int64_t bb = 0;
  if (!mul(b, b, &bb)) return;
  const bool to_space = n.op_type == "DepthToSpace";
  auto scaled = [&](const DimInfo& d, bool up, int64_t f) {
    int64_t v = 0;
    if (d.value < 0) return unknown_dim();
    if (up) return mul(d.value, f, &v) ? known_dim(v) : unknown_dim();
    return d.value % f == 0 ? known_dim(d.value / f) : unknown_dim();
  };
  c.set(n.outputs[0], c.dtype_of(C::input(n, 0)),
        {(*x)[0], scaled((*x)[1], !to_space, bb), scaled((*x)[2], to_space, b), scaled((*x)[3], to_space, b)});
}

}  // namespace

void add_spatial_shape_rules(ShapeRuleTable& t) {
  t[{"", "QLinearConv"}] = integer_conv;
  t[{"", "ConvInteger"}] = integer_conv;
  t[{"", "ConvTranspose"}] = conv_transpose;
  t[{"", "Resize"}] = resize;
  t[{"", "Pad"}] = pad;
  t[{"", "DepthToSpace"}] = depth_space;
  t[{"", "SpaceToDepth"}] = depth_space;
}

}  // namespace loom::opreg
