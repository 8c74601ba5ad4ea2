// Linear quantization: QuantizeLinear, DequantizeLinear (per tensor; from
// opset 13 per axis; from 21 blocked and 16-bit; from 19 float8, from 21
// int4 / uint4, from 23 float4e2m1, from 25 int2 / uint2) and
// DynamicQuantizeLinear.
#include <algorithm>
#include <cmath>
#include <vector>

#include "common/dispatch.h"
#include "common/nn_quant.h"
#include "common/small_types.h"
#include "kernel_families.h"
#include "kernels/nn_internal.h"

namespace loom::reference {
namespace {

using sdk::ConstTensor;
using sdk::KernelContext;

// Maps a flat element index of x to the index of its scale / zero point:
// 0 per tensor; per axis, the coordinate along `axis`; blocked (opset 21,
// block_size > 0), the scale tensor has x's rank, x's dims except along
// `axis`, where each scale covers block_size consecutive elements.
struct ParamMap {
  int64_t channels = 1, inner = 1, dim = 1, block = 0, scale_dim = 1;
  int64_t operator()(int64_t i) const {
    if (channels == 1) return 0;
    if (block == 0) return (i / inner) % channels;
    const int64_t a = (i / inner) % dim, outer = i / (inner * dim);
    return (outer * scale_dim + a / block) * inner + i % inner;
  }
};

ParamMap param_map(const Shape& xs, const ConstTensor& scale, const sdk::Node& node, const std::string& op) {
  ParamMap m;
  const int64_t block = node.opset() >= 21 ? node.attr_int("block_size", 0) : 0;
  if (block < 0) sdk::fail_invalid(op + ": block_size must be non-negative, got " + std::to_string(block));
  if (block == 0 && scale.size() == 1 && scale.rank() <= 1) return m;
  const int64_t rank = static_cast<int64_t>(xs.size());
  const int64_t axis = normalize_axis(node.attr_int("axis", 1), rank, op);
  m.inner = dims_product(xs, static_cast<size_t>(axis) + 1, xs.size());
  m.dim = xs[static_cast<size_t>(axis)];
  if (block == 0) {
    if (scale.rank() != 1)
      sdk::fail_invalid(op + ": scale must be a scalar or a 1-D tensor (or blocked, with block_size)");
    if (scale.size() != m.dim)
      sdk::fail_invalid(op + ": scale has " + std::to_string(scale.size()) + " elements, axis " + std::to_string(axis) +
                        " of the input has " + std::to_string(m.dim));
    m.channels = m.dim;
    return m;
  }
  // Blocked: scale [.., ceil(dim / block), ..].
  const Shape ss = scale.shape();
  bool ok = static_cast<int64_t>(ss.size()) == rank;
  for (int64_t d = 0; ok && d < rank; ++d)
    ok = d == axis ? ss[static_cast<size_t>(d)] == m.dim / block + (m.dim % block != 0 ? 1 : 0)
                   : ss[static_cast<size_t>(d)] == xs[static_cast<size_t>(d)];
  if (!ok)
    sdk::fail_invalid(op + ": with block_size " + std::to_string(block) + " along axis " + std::to_string(axis) +
                      ", scale must have the input's shape " + shape_string(xs) + " with that axis divided into blocks, got " +
                      shape_string(ss));
  m.block = block;
  m.scale_dim = ss[static_cast<size_t>(axis)];
  m.channels = scale.size();
  return m;
}

// QuantizeLinear into an 8/4/2-bit type: small::quantize with the node's
// saturate (float8 targets).
void quantize_small(KernelContext& ctx, small::Type type, const ConstTensor& x, const ParamMap& pm,
                    const QuantParams& q, const std::string& op) {
  sdk::Tensor out = ctx.output(0, x.shape(), small::onnx_data_type(type));
  if (out.size() == 0) return;
  auto* y = static_cast<uint8_t*>(out.raw_mutable_data());
  const bool saturate = ctx.node().find_int("saturate").value_or(1) != 0;
  dispatch<TypeList<float, int32_t, Float16, BFloat16, double>>(x.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.template data<T>();
    for (int64_t i = 0, n = x.size(); i < n; ++i) {
      const int64_t c = pm(i);
      const float v = static_cast<float>(static_cast<compute_t<T>>(px[i]));
      y[i] = small::quantize(type, v / q.scale_at(c), static_cast<uint8_t>(q.zero_at(c)), saturate);
    }
  });
}

void quantize_linear(KernelContext& ctx) {
  const std::string op = "QuantizeLinear";
  const ConstTensor x = ctx.required_input(0), scale = ctx.required_input(1), zero = ctx.input(2);
  const Shape xs = x.shape();
  const ParamMap pm = param_map(xs, scale, ctx.node(), op);
  if (zero.exists() && zero.size() != scale.size())
    sdk::fail_invalid(op + ": y_zero_point and y_scale have different sizes");
  const QuantParams q = read_quant_params(scale, zero, pm.channels, op);
  // The output type: the zero point's, else (opset 21) output_dtype, else uint8.
  const int64_t output_dtype = ctx.node().opset() >= 21 ? ctx.node().attr_int("output_dtype", 0) : 0;
  if (zero.exists() && output_dtype != 0 && output_dtype != zero.dtype())
    sdk::fail_invalid(op + ": output_dtype differs from y_zero_point's type");
  const int32_t out_type = zero.exists() ? zero.dtype() : output_dtype != 0 ? static_cast<int32_t>(output_dtype) : LOOM_DTYPE_UINT8;
  if (const auto small_type = small::type_from_onnx(out_type)) return quantize_small(ctx, *small_type, x, pm, q, op);
  dispatch<TypeList<uint8_t, int8_t, uint16_t, int16_t>>(out_type, op, [&](auto qtag) {
    using Q = decltype(qtag);
    sdk::Tensor out = ctx.output(0, xs, out_type);
    if (out.size() == 0) return;
    Q* y = out.template mutable_data<Q>();
    dispatch<TypeList<float, int32_t, Float16, BFloat16, double>>(x.dtype(), op, [&](auto tag) {
      using T = decltype(tag);
      const T* px = x.template data<T>();
      for (int64_t i = 0, n = x.size(); i < n; ++i) {
        const int64_t c = pm(i);
        const float v = static_cast<float>(static_cast<compute_t<T>>(px[i]));
        y[i] = quantize_round<Q>(v / q.scale_at(c), q.zero_at(c));
      }
    });
  });
}

// The output is float up to opset 18 and the scale's type from 19 on.
void dequantize_linear(KernelContext& ctx) {
  const std::string op = "DequantizeLinear";
  const ConstTensor x = ctx.required_input(0), scale = ctx.required_input(1), zero = ctx.input(2);
  const Shape xs = x.shape();
  const ParamMap pm = param_map(xs, scale, ctx.node(), op);
  if (zero.exists() && zero.size() != scale.size())
    sdk::fail_invalid(op + ": x_zero_point and x_scale have different sizes");
  if (zero.exists() && zero.dtype() != x.dtype()) sdk::fail_invalid(op + ": x_zero_point type differs from x");
  const QuantParams q = read_quant_params(scale, zero, pm.channels, op);
  const int32_t out_type = ctx.node().opset() >= 19 ? scale.dtype() : LOOM_DTYPE_FLOAT;
  if (const auto small_type = small::type_from_onnx(x.dtype())) {
    const auto* codes = static_cast<const uint8_t*>(x.raw_data());
    dispatch<TypeList<float, double, Float16, BFloat16>>(out_type, op, [&](auto otag) {
      using O = decltype(otag);
      sdk::Tensor out = ctx.output(0, xs, out_type);
      O* y = out.template mutable_data<O>();
      for (int64_t i = 0, n = x.size(); i < n; ++i) {
        const int64_t c = pm(i);
        y[i] = static_cast<O>(small::dequantize(*small_type, codes[i], static_cast<uint8_t>(q.zero_at(c)), q.scale_at(c)));
      }
    });
    return;
  }
  dispatch<TypeList<float, double, Float16, BFloat16>>(out_type, op, [&](auto otag) {
    using O = decltype(otag);
    sdk::Tensor out = ctx.output(0, xs, out_type);
    if (out.size() == 0) return;
    O* y = out.template mutable_data<O>();
    dispatch<TypeList<uint8_t, int8_t, uint16_t, int16_t, int32_t>>(x.dtype(), op, [&](auto tag) {
      using T = decltype(tag);
      const T* px = x.template data<T>();
      for (int64_t i = 0, n = x.size(); i < n; ++i) {
        const int64_t c = pm(i);
        y[i] = static_cast<O>(static_cast<float>(static_cast<int32_t>(px[i]) - q.zero_at(c)) * q.scale_at(c));
      }
    });
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
  // Clamped min then max, as ORT does: a NaN zero point (an infinite lo over
  // an infinite scale) becomes 255 instead of an undefined conversion.
  const float zp_f = std::nearbyint(std::max(0.0f, std::min(255.0f, 0.0f - lo / scale)));
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
