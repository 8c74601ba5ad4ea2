// Linear quantization: QuantizeLinear, DequantizeLinear (per tensor and, from
// opset 13, per axis) and DynamicQuantizeLinear.
#include <algorithm>
#include <cmath>
#include <vector>

#include "common/dispatch.h"
#include "common/nn_quant.h"
#include "kernel_families.h"
#include "kernels/nn_internal.h"

namespace loom::reference {
namespace {

using sdk::ConstTensor;
using sdk::KernelContext;

// Maps a flat element index of x to its quantization channel.
struct ChannelMap {
  int64_t channels = 1, inner = 1;
  int64_t operator()(int64_t i) const { return channels == 1 ? 0 : (i / inner) % channels; }
};

// Per-tensor when the scale has one element, else per-axis along `axis`.
ChannelMap channel_map(const Shape& xs, const ConstTensor& scale, int64_t axis_attr, const std::string& op) {
  ChannelMap cm;
  if (scale.size() == 1 && scale.rank() <= 1) return cm;
  if (scale.rank() != 1) sdk::fail_invalid(op + ": scale must be a scalar or a 1-D tensor");
  const int64_t axis = normalize_axis(axis_attr, static_cast<int64_t>(xs.size()), op);
  if (scale.size() != xs[axis])
    sdk::fail_invalid(op + ": scale has " + std::to_string(scale.size()) + " elements, axis " + std::to_string(axis) +
                      " of the input has " + std::to_string(xs[axis]));
  cm.channels = xs[axis];
  cm.inner = dims_product(xs, axis + 1, xs.size());
  return cm;
}

void quantize_linear(KernelContext& ctx) {
  const std::string op = "QuantizeLinear";
  const ConstTensor x = ctx.required_input(0), scale = ctx.required_input(1), zero = ctx.input(2);
  const Shape xs = x.shape();
  const ChannelMap cm = channel_map(xs, scale, ctx.node().attr_int("axis", 1), op);
  if (zero.exists() && zero.size() != scale.size())
    sdk::fail_invalid(op + ": y_zero_point and y_scale have different sizes");
  const QuantParams q = read_quant_params(scale, zero, cm.channels, op);
  const int32_t out_type = zero.exists() ? zero.dtype() : LOOM_DTYPE_UINT8;
  dispatch<TypeList<uint8_t, int8_t>>(out_type, op, [&](auto qtag) {
    using Q = decltype(qtag);
    Q* y = ctx.output(0, xs, out_type).template mutable_data<Q>();
    dispatch<TypeList<float, int32_t, Float16, BFloat16, double>>(x.dtype(), op, [&](auto tag) {
      using T = decltype(tag);
      const T* px = x.template data<T>();
      for (int64_t i = 0, n = x.size(); i < n; ++i) {
        const int64_t c = cm(i);
        const float v = static_cast<float>(static_cast<compute_t<T>>(px[i]));
        y[i] = quantize_round<Q>(v / q.scale_at(c), q.zero_at(c));
      }
    });
  });
}

void dequantize_linear(KernelContext& ctx) {
  const std::string op = "DequantizeLinear";
  const ConstTensor x = ctx.required_input(0), scale = ctx.required_input(1), zero = ctx.input(2);
  const Shape xs = x.shape();
  const ChannelMap cm = channel_map(xs, scale, ctx.node().attr_int("axis", 1), op);
  if (zero.exists() && zero.size() != scale.size())
    sdk::fail_invalid(op + ": x_zero_point and x_scale have different sizes");
  if (zero.exists() && zero.dtype() != x.dtype()) sdk::fail_invalid(op + ": x_zero_point type differs from x");
  const QuantParams q = read_quant_params(scale, zero, cm.channels, op);
  float* y = ctx.output(0, xs, LOOM_DTYPE_FLOAT).mutable_data<float>();
  dispatch<TypeList<uint8_t, int8_t, int32_t>>(x.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.template data<T>();
    for (int64_t i = 0, n = x.size(); i < n; ++i) {
      const int64_t c = cm(i);
      y[i] = static_cast<float>(static_cast<int32_t>(px[i]) - q.zero_at(c)) * q.scale_at(c);
    }
  });
}

void dynamic_quantize_linear(KernelContext& ctx) {
  const ConstTensor x = ctx.required_input(0);
  if (x.dtype() != LOOM_DTYPE_FLOAT) unsupported_type("DynamicQuantizeLinear", x.dtype());
  const float* px = x.data<float>();
  const int64_t n = x.size();
  float lo = 0.0f, hi = 0.0f;  // the range always includes zero
  for (int64_t i = 0; i < n; ++i) {
    lo = std::min(lo, px[i]);
    hi = std::max(hi, px[i]);
  }
  // qmin = 0, qmax = 255 (uint8). A degenerate range gets scale 1 like ORT.
  const float scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
  const float zp_f = std::nearbyint(std::clamp(0.0f - lo / scale, 0.0f, 255.0f));
  const uint8_t zp = static_cast<uint8_t>(zp_f);
  uint8_t* y = ctx.output(0, x.shape(), LOOM_DTYPE_UINT8).mutable_data<uint8_t>();
  for (int64_t i = 0; i < n; ++i) y[i] = quantize_round<uint8_t>(px[i] / scale, zp);
  if (ctx.output_count() > 1) *ctx.output(1, {}, LOOM_DTYPE_FLOAT).mutable_data<float>() = scale;
  if (ctx.output_count() > 2) *ctx.output(2, {}, LOOM_DTYPE_UINT8).mutable_data<uint8_t>() = zp;
}

}  // namespace

void register_nn_quant_kernels(sdk::KernelRegistry& r) {
  r.add("", "QuantizeLinear", 10, LOOM_OPSET_OPEN_END, quantize_linear);
  r.add("", "DequantizeLinear", 10, LOOM_OPSET_OPEN_END, dequantize_linear);
  r.add("", "DynamicQuantizeLinear", 11, LOOM_OPSET_OPEN_END, dynamic_quantize_linear);
}

}  // namespace loom::reference
