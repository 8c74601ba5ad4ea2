// QLinearConv (2-D) as a oneDNN int8 convolution: u8/s8 source, s8 weights
// packed once (with oneDNN's zero-point / s8-source compensation computed
// by the packing reorder), s32 bias, u8/s8 destination; layouts chosen by
// oneDNN (format_tag::any).
//
// oneDNN 2.6 computes dst = saturate(round(scale[oc] * (conv(src - src_zp,
// wei) + bias)) + dst_zp), padding counted as src_zp (zero after the
// shift), which is ONNX's y = saturate(round((acc + B) * x_scale *
// w_scale[oc] / y_scale) + y_zp) with scale = x_scale * w_scale / y_scale.
// Both round half to even; results may still differ by 1 where the float
// products land on a tie in a different order (see qlinear_test.cpp).
//
// A quantized residual after it (fusion_plan.h),
//   out = Q(relu?(DQ(y) + DQ(r))), y = this convolution's output,
// is computed by the convolution itself, writing `out` directly: output
// scales x_scale * w_scale / out_scale, then post-ops
//   clip to y's range: [(qmin - y_zp), (qmax - y_zp)] * y_scale / out_scale
//     (y's saturation, so values y would clip are clipped here too),
//   sum over a dst holding r: + r_scale / out_scale * (r - r_zp),
//   relu when the graph has one,
// and out's zero point, added before the final rounding and saturation.
// y itself is never rounded: results may differ from the unfused graph by
// one step of `out` (that rounding, up to half a step of y, plus out's own
// rounding landing the other side); see qlinear_test.cpp. The residual is
// accumulated in r's own bytes when nothing else still reads them
// (sum_destination), else r is copied into the destination first.
#include <oneapi/dnnl/dnnl.hpp>

#include <optional>

#include "compiled_partition.h"
#include "ops/conv_geometry.h"
#include "ops/op_builders.h"
#include "ops/post_ops.h"
#include "ops/quant_params.h"

namespace loom::onednn {
namespace {

using dnnl::memory;
using tag = memory::format_tag;

std::pair<int32_t, int32_t> type_range(memory::data_type t) {
  return t == memory::data_type::s8 ? std::make_pair(-128, 127) : std::make_pair(0, 255);
}

// The fused form of a quantized residual chain.
struct Residual {
  std::vector<PostOp> ops;  // clip, sum, [relu]
  float out_scale = 1.f;
  int32_t out_zero = 0;
  memory::data_type out_type = memory::data_type::u8;
};

// The residual chain {DQ(y), DQ(r), Add, [Relu], Q} as post-ops of the
// convolution `n` with output dims `dims`; nullopt when it cannot be
// computed exactly that way (the chain is then built node by node):
// per-axis parameters, DQ(y) not undoing the convolution's own y
// quantization, r of another shape or of another type than out (the sum
// post-op reads r as dst's type), r not available as a tensor.
std::optional<Residual> plan_residual(ProgramBuilder& b, const NodeSpec& n, const Chain& chain,
                                      const std::vector<int64_t>& dims) {
  if (chain.size() != 4 && chain.size() != 5) return std::nullopt;
  const NodeSpec &dq_y = *chain[0], &dq_r = *chain[1], &q = *chain.back();
  const bool relu = chain.size() == 5;
  if (dq_y.op_type != "DequantizeLinear" || dq_r.op_type != "DequantizeLinear" || q.op_type != "QuantizeLinear" ||
      dq_y.inputs[0] != n.outputs[0])
    return std::nullopt;
  const auto py = scalar_quant_params(dq_y), pr = scalar_quant_params(dq_r), po = scalar_quant_params(q);
  if (!py || !pr || !po) return std::nullopt;
  const float y_scale = scalar_scale(n, 6);
  const int32_t y_zero = scalar_zero_point(n, 7);
  if (py->scale != y_scale || py->zero_point != y_zero) return std::nullopt;
  const std::optional<memory::data_type> y_type = dnnl_type_of(n.output_dtypes[0]);
  const std::optional<memory::data_type> out_type = dnnl_type_of(q.output_dtypes[0]);
  if (!y_type || !out_type || (*out_type != memory::data_type::u8 && *out_type != memory::data_type::s8))
    return std::nullopt;
  if (!b.defined(dq_r.inputs[0])) return std::nullopt;
  const ValueId r = b.value_of(dq_r.inputs[0]);
  if (b.dims(r) != dims || b.desc(r).data_type() != *out_type) return std::nullopt;

  Residual res;
  res.out_scale = po->scale;
  res.out_zero = po->zero_point;
  res.out_type = *out_type;
  const size_t last = chain.size() - 1;  // all or nothing: every post-op ends the chain
  const auto [qmin, qmax] = type_range(*y_type);
  PostOp clip;
  clip.kind = PostOp::kEltwise;
  clip.eltwise = {dnnl::algorithm::eltwise_clip,
                  static_cast<float>(static_cast<double>(qmin - y_zero) * y_scale / po->scale),
                  static_cast<float>(static_cast<double>(qmax - y_zero) * y_scale / po->scale)};
  clip.node_index = last;
  clip.node = &dq_y;
  res.ops.push_back(clip);
  PostOp sum;
  sum.kind = PostOp::kSum;
  sum.operand = r;
  sum.sum_scale = pr->scale / po->scale;
  sum.sum_zero_point = pr->zero_point;
  sum.node_index = last;
  sum.node = &dq_r;  // the node reading r (for can_overwrite)
  res.ops.push_back(sum);
  if (relu) {
    PostOp e;
    e.kind = PostOp::kEltwise;
    e.eltwise = {dnnl::algorithm::eltwise_relu, 0.f, 0.f};
    e.node_index = last;
    e.node = chain[3];
    res.ops.push_back(e);
  }
  return res;
}

}  // namespace

size_t build_qlinear_conv(ProgramBuilder& b, const NodeSpec& n, const Chain& chain) {
  const ValueId x = b.value_of(n.inputs[0]);
  const ValueId w = b.value_of(n.inputs[3]);
  const ConvShape s = conv_shape(n, b.dims(x), b.dims(w), false);
  const ValueId wv = weights_view(b, w, s.group, false);
  const std::vector<float> w_scales = constant_scales(b, n, 4);
  if (w_scales.size() != 1 && static_cast<int64_t>(w_scales.size()) != s.out_channels)
    n.fail("w_scale must hold 1 or " + std::to_string(s.out_channels) + " values");
  const int32_t x_zero = scalar_zero_point(n, 2);
  std::optional<ValueId> bias;
  if (n.has_input(8)) {
    bias = b.value_of(n.inputs[8]);
    if (b.dims(*bias) != std::vector<int64_t>{s.out_channels} || b.desc(*bias).data_type() != memory::data_type::s32)
      n.fail("B must be int32 with one value per output channel");
  }

  const memory::desc src(b.dims(x), b.desc(x).data_type(), tag::any);
  const memory::desc wei(b.dims(wv), memory::data_type::s8, tag::any);
  const Window& win = s.window;
  // The primitive writing a result of scale `out_scale`, zero point
  // `out_zero` and type `out_type` in layout `dst` (format any: oneDNN's
  // choice), with `ops` as post-ops.
  auto make = [&](float out_scale, int32_t out_zero, const memory::desc& dst, const std::vector<PostOp>& ops) {
    dnnl::primitive_attr attr = b.attr();
    // Per-channel scales index dst's channel dim (dim 1), groups included.
    attr.set_output_scales(w_scales.size() == 1 ? 0 : 1 << 1,
                           requantize_scales(scalar_scale(n, 1), w_scales, out_scale));
    request_zero_point(attr, DNNL_ARG_SRC, x_zero);
    request_zero_point(attr, DNNL_ARG_DST, out_zero);
    if (!ops.empty()) attr.set_post_ops(make_post_ops(ops, ops.size()));
    if (bias) {
      const memory::desc bia({s.out_channels}, memory::data_type::s32, tag::a);
      return dnnl::convolution_forward::primitive_desc(
          dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src,
                                          wei, bia, dst, win.strides, win.dnnl_dilations(), win.pad_begin, win.pad_end),
          attr, b.engine());
    }
    return dnnl::convolution_forward::primitive_desc(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src,
                                        wei, dst, win.strides, win.dnnl_dilations(), win.pad_begin, win.pad_end),
        attr, b.engine());
  };

  // The residual fused when oneDNN has an optimised kernel for it (its
  // reference kernel is far slower than the separate steps).
  std::optional<Residual> residual = chain.empty() ? std::nullopt : plan_residual(b, n, chain, s.dst_dims);
  std::optional<dnnl::convolution_forward::primitive_desc> pd;
  if (residual) {
    const Residual& r = *residual;
    try {
      auto fused = make(r.out_scale, r.out_zero, memory::desc(s.dst_dims, r.out_type, tag::any), r.ops);
      if (!is_reference_impl(fused.impl_info_str())) {
        // As for float residuals (conv.cpp): a residual that can be
        // accumulated in place in another blocked layout is asked for as
        // dst rather than converted.
        if (auto want = in_place_sum_desc(b, residual->ops, r.ops.size());
            want && *want != fused.dst_desc() && *want != plain_desc(s.dst_dims, r.out_type)) {
          try {
            auto in_place = make(r.out_scale, r.out_zero, *want, r.ops);
            if (!is_reference_impl(in_place.impl_info_str())) fused = in_place;
          } catch (const dnnl::error&) {
            // Keep oneDNN's layout and copy the residual.
          }
        }
        pd = fused;
      }
    } catch (const dnnl::error&) {
      // No fused kernel: the chain is built node by node.
    }
    if (!pd) residual.reset();
  }
  const int32_t dst_zero = residual ? residual->out_zero : scalar_zero_point(n, 7);
  if (!pd) {
    const memory::desc dst(s.dst_dims, *dnnl_type_of(n.output_dtypes[0]), tag::any);
    pd = make(scalar_scale(n, 6), dst_zero, dst, {});
  }

  std::vector<std::pair<int, ValueId>> args = {{DNNL_ARG_SRC, b.require(x, pd->src_desc())},
                                               {DNNL_ARG_WEIGHTS, b.require(wv, pd->weights_desc())}};
  if (bias) args.emplace_back(DNNL_ARG_BIAS, b.require(*bias, pd->bias_desc()));
  const std::vector<PostOp> no_ops;
  const std::vector<PostOp>& ops = residual ? residual->ops : no_ops;
  const size_t used = ops.size();
  // With a residual: r's own bytes when it may be overwritten, else a new
  // value that bind_post_ops first fills with a copy of r.
  const ValueId out = residual
                          ? sum_destination(b, ops, used, pd->dst_desc(), s.dst_dims, result_name(n, chain, ops, used))
                          : b.new_value(pd->dst_desc(), s.dst_dims, n.outputs[0]);
  args.emplace_back(DNNL_ARG_DST, out);
  bind_post_ops(b, ops, used, out, args, n.label());
  bind_zero_point(b, args, DNNL_ARG_SRC, x_zero);
  bind_zero_point(b, args, DNNL_ARG_DST, dst_zero);
  b.add_step(dnnl::convolution_forward(*pd), std::move(args), pd->scratchpad_desc(), n.label());
  if (!residual) {
    b.define(n.outputs[0], out);
    return 0;
  }
  b.name_last_step("convolution quantized-residual");
  return finish_chain(b, n, chain, ops, used, out);
}

}  // namespace loom::onednn
