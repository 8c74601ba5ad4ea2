// DeformConv (19, 22), 2-D: a grouped convolution whose kernel taps sample
// X at positions moved by per-position offsets (bilinear; taps outside X
// read zeros), each tap weighted by an optional mask.
#include <cmath>

#include "common/reduction_common.h"
#include "kernels/nn_internal.h"

namespace loom::reference {
namespace {

using sdk::KernelContext;

// X[y, x] of one plane, bilinear; corners outside the plane count as zero.
double bilinear(const double* plane, int64_t h, int64_t w, double y, double x) {
  if (!std::isfinite(y) || !std::isfinite(x) || y <= -1 || x <= -1 || y >= static_cast<double>(h) ||
      x >= static_cast<double>(w))
    return 0;  // every corner is outside
  const double y0 = std::floor(y), x0 = std::floor(x);
  const double ly = y - y0, lx = x - x0;
  const int64_t iy = static_cast<int64_t>(y0), ix = static_cast<int64_t>(x0);
  auto at = [&](int64_t r, int64_t c) { return r < 0 || r >= h || c < 0 || c >= w ? 0.0 : plane[r * w + c]; };
  return (1 - ly) * ((1 - lx) * at(iy, ix) + lx * at(iy, ix + 1)) + ly * ((1 - lx) * at(iy + 1, ix) + lx * at(iy + 1, ix + 1));
}

// X [N, C, H, W], W [oC, C / group, kH, kW], offset [N, offset_group * 2 *
// kH * kW, oH, oW] ((dy, dx) per tap), B [oC], mask [N, offset_group * kH *
// kW, oH, oW]. Input channel c uses offset group c / (C / offset_group).
void deform_conv(KernelContext& ctx) {
  const std::string op = "DeformConv";
  const sdk::Node node = ctx.node();
  const sdk::ConstTensor x_t = ctx.required_input(0), w_t = ctx.required_input(1), off_t = ctx.required_input(2);
  const sdk::ConstTensor b_t = ctx.input(3), mask_t = ctx.input(4);
  const Shape xs = x_t.shape(), ws = w_t.shape(), os = off_t.shape();
  if (xs.size() != 4) sdk::fail_invalid(op + ": only 2-D input [N, C, H, W] is supported, got " + shape_string(xs));
  if (ws.size() != 4 || os.size() != 4)
    sdk::fail_invalid(op + ": W and offset must be 4-D, got " + shape_string(ws) + " and " + shape_string(os));
  const int64_t N = xs[0], C = xs[1], H = xs[2], Wd = xs[3], OC = ws[0], kh = ws[2], kw = ws[3];
  const int64_t group = node.attr_int("group", 1), offset_group = node.attr_int("offset_group", 1);
  if (group <= 0 || offset_group <= 0 || C != ws[1] * group || OC % group != 0 || C % offset_group != 0)
    sdk::fail_invalid(op + ": channels inconsistent: X " + shape_string(xs) + ", W " + shape_string(ws) + ", group " +
                      std::to_string(group) + ", offset_group " + std::to_string(offset_group));
  const std::vector<int64_t> kernel = node.attr_ints("kernel_shape", {kh, kw});
  if (kernel != std::vector<int64_t>{kh, kw}) sdk::fail_invalid(op + ": kernel_shape differs from W's spatial dims");
  const std::vector<int64_t> strides = node.attr_ints("strides", {1, 1}), dil = node.attr_ints("dilations", {1, 1});
  const std::vector<int64_t> pads = node.attr_ints("pads", {0, 0, 0, 0});
  if (strides.size() != 2 || dil.size() != 2 || pads.size() != 4)
    sdk::fail_invalid(op + ": strides and dilations need 2 values, pads 4");
  for (int64_t v : strides)
    if (v <= 0) sdk::fail_invalid(op + ": strides must be positive");
  for (int64_t v : dil)
    if (v <= 0) sdk::fail_invalid(op + ": dilations must be positive");
  for (int64_t v : pads)
    if (v < 0) sdk::fail_invalid(op + ": pads must be non-negative");
  const int64_t taps = sdk::checked_mul(kh, kw, op + ": kernel size");
  const int64_t oh = os[2], ow = os[3];
  if (os[0] != N || os[1] != sdk::checked_mul(offset_group, 2 * taps, op + ": offset channels"))
    sdk::fail_invalid(op + ": offset must be [" + std::to_string(N) + ", " + std::to_string(offset_group * 2 * taps) +
                      ", oH, oW], got " + shape_string(os));
  // The output size the geometry gives must be offset's.
  auto out_dim = [&](int64_t in, int64_t k, int64_t s, int64_t d, int64_t p0, int64_t p1) {
    const int64_t span = sdk::checked_add(sdk::checked_mul(d, k - 1, op), 1, op);
    const int64_t padded = sdk::checked_add(sdk::checked_add(in, p0, op), p1, op);
    return padded < span ? -1 : (padded - span) / s + 1;
  };
  if (out_dim(H, kh, strides[0], dil[0], pads[0], pads[2]) != oh || out_dim(Wd, kw, strides[1], dil[1], pads[1], pads[3]) != ow)
    sdk::fail_invalid(op + ": offset's spatial dims [" + std::to_string(oh) + "," + std::to_string(ow) +
                      "] are not the output size that kernel, strides, dilations and pads give");
  if (b_t.exists() && b_t.shape() != Shape{OC}) sdk::fail_invalid(op + ": B must be [" + std::to_string(OC) + "]");
  if (mask_t.exists() && mask_t.shape() != Shape{N, offset_group * taps, oh, ow})
    sdk::fail_invalid(op + ": mask must be " + shape_string({N, offset_group * taps, oh, ow}) + ", got " +
                      shape_string(mask_t.shape()));
  const Shape ys = {N, OC, oh, ow};
  const int64_t count = sdk::checked_element_count(ys, op + ": output size");
  // The output first, within the run's limits (oC x oH x oW can be far
  // larger than any input); the sums in kernel scratch, counted likewise.
  sdk::Tensor out = ctx.output(0, ys, x_t.dtype());
  if (count == 0) return;
  const std::vector<double> x = float_tensor_to_doubles(x_t, op), w = float_tensor_to_doubles(w_t, op),
                            off = float_tensor_to_doubles(off_t, op);
  const std::vector<double> bias = b_t.exists() ? float_tensor_to_doubles(b_t, op) : std::vector<double>();
  const std::vector<double> mask = mask_t.exists() ? float_tensor_to_doubles(mask_t, op) : std::vector<double>();
  double* y = ctx.scratch<double>(count, op + ": sums");
  const int64_t ic_per_group = C / group, oc_per_group = OC / group, ic_per_offset = C / offset_group;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t oc = 0; oc < OC; ++oc) {
      const int64_t g = oc / oc_per_group;
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double acc = bias.empty() ? 0.0 : bias[static_cast<size_t>(oc)];
          for (int64_t ci = 0; ci < ic_per_group; ++ci) {
            const int64_t c = g * ic_per_group + ci, og = c / ic_per_offset;
            const double* plane = x.data() + (n * C + c) * H * Wd;
            for (int64_t a = 0; a < kh; ++a)
              for (int64_t b = 0; b < kw; ++b) {
                const int64_t tap = a * kw + b;
                const int64_t oy = ((n * offset_group + og) * taps + tap) * 2;  // channel of dy; dx follows
                const double dy = off[static_cast<size_t>((oy * oh + i) * ow + j)];
                const double dx = off[static_cast<size_t>(((oy + 1) * oh + i) * ow + j)];
                const double py = static_cast<double>(i * strides[0] - pads[0] + a * dil[0]) + dy;
                const double px = static_cast<double>(j * strides[1] - pads[1] + b * dil[1]) + dx;
                double v = bilinear(plane, H, Wd, py, px) * w[static_cast<size_t>(((oc * ic_per_group + ci) * kh + a) * kw + b)];
                if (!mask.empty()) v *= mask[static_cast<size_t>((((n * offset_group + og) * taps + tap) * oh + i) * ow + j)];
                acc += v;
              }
          }
          y[((n * OC + oc) * oh + i) * ow + j] = acc;
        }
      ctx.stop_if_asked();
    }
  dispatch<FloatTypes>(x_t.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    T* p = out.mutable_data<T>();
    for (int64_t i = 0; i < count; ++i) p[i] = to_elem<T>(y[i]);
  });
}

}  // namespace

void register_nn_deform_conv_kernels(sdk::KernelRegistry& r) {
  r.add("", "DeformConv", 19, LOOM_OPSET_OPEN_END, deform_conv);
}

}  // namespace loom::reference
