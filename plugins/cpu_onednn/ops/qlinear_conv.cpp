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
#include <oneapi/dnnl/dnnl.hpp>

#include "ops/conv_geometry.h"
#include "ops/op_builders.h"
#include "ops/quant_params.h"

namespace loom::onednn {

size_t build_qlinear_conv(ProgramBuilder& b, const NodeSpec& n, const Chain&) {
  using dnnl::memory;
  using tag = memory::format_tag;
  const ValueId x = b.value_of(n.inputs[0]);
  const ValueId w = b.value_of(n.inputs[3]);
  const ConvShape s = conv_shape(n, b.dims(x), b.dims(w), false);
  const ValueId wv = weights_view(b, w, s.group, false);
  const std::vector<float> w_scales = constant_scales(b, n, 4);
  if (w_scales.size() != 1 && static_cast<int64_t>(w_scales.size()) != s.out_channels)
    n.fail("w_scale must hold 1 or " + std::to_string(s.out_channels) + " values");
  const int32_t x_zero = scalar_zero_point(n, 2), y_zero = scalar_zero_point(n, 7);
  std::optional<ValueId> bias;
  if (n.has_input(8)) {
    bias = b.value_of(n.inputs[8]);
    if (b.dims(*bias) != std::vector<int64_t>{s.out_channels} || b.desc(*bias).data_type() != memory::data_type::s32)
      n.fail("B must be int32 with one value per output channel");
  }

  dnnl::primitive_attr attr = b.attr();
  // Per-channel scales index dst's channel dim (dim 1), groups included.
  attr.set_output_scales(w_scales.size() == 1 ? 0 : 1 << 1,
                         requantize_scales(scalar_scale(n, 1), w_scales, scalar_scale(n, 6)));
  request_zero_point(attr, DNNL_ARG_SRC, x_zero);
  request_zero_point(attr, DNNL_ARG_DST, y_zero);
  const memory::desc src(b.dims(x), b.desc(x).data_type(), tag::any);
  const memory::desc wei(b.dims(wv), memory::data_type::s8, tag::any);
  const memory::desc dst(s.dst_dims, *dnnl_type_of(n.output_dtypes[0]), tag::any);
  const Window& win = s.window;
  auto make = [&]() {
    if (bias) {
      const memory::desc bia({s.out_channels}, memory::data_type::s32, tag::a);
      return dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                             src, wei, bia, dst, win.strides, win.dnnl_dilations(), win.pad_begin,
                                             win.pad_end);
    }
    return dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                           src, wei, dst, win.strides, win.dnnl_dilations(), win.pad_begin,
                                           win.pad_end);
  };
  const dnnl::convolution_forward::primitive_desc pd(make(), attr, b.engine());

  std::vector<std::pair<int, ValueId>> args = {{DNNL_ARG_SRC, b.require(x, pd.src_desc())},
                                               {DNNL_ARG_WEIGHTS, b.require(wv, pd.weights_desc())}};
  if (bias) args.emplace_back(DNNL_ARG_BIAS, b.require(*bias, pd.bias_desc()));
  const ValueId out = b.new_value(pd.dst_desc(), s.dst_dims, n.outputs[0]);
  args.emplace_back(DNNL_ARG_DST, out);
  bind_zero_point(b, args, DNNL_ARG_SRC, x_zero);
  bind_zero_point(b, args, DNNL_ARG_DST, y_zero);
  b.add_step(dnnl::convolution_forward(pd), std::move(args), pd.scratchpad_desc(), n.label());
  b.define(n.outputs[0], out);
  return 0;
}

}  // namespace loom::onednn
