// ConvInteger (2-D) as a oneDNN int8 convolution with an s32 destination:
// y = conv(x - x_zero_point, w), padding counted as x_zero_point (zero after
// the shift), as ONNX defines it; no scales, so the result is exact. The
// weights (int8, zero points zero: quant_support.cpp) are packed once with
// oneDNN's zero-point compensation. x_zero_point may be a value computed at
// run time (DynamicQuantizeLinear's): a host step then turns its one uint8 /
// int8 element into the s32 run-time zero point oneDNN reads.
//
// Cast to float32 (from int32, int8, uint8 or float32) is a reorder: the
// Cast after a ConvInteger, and quantize_dynamic's Muls by the scales after
// that, are then ordinary float steps of the same partition.
#include <oneapi/dnnl/dnnl.hpp>

#include "ops/conv_geometry.h"
#include "ops/op_builders.h"
#include "ops/quant_params.h"

namespace loom::onednn {
namespace {

using dnnl::memory;

// The s32 run-time zero point of x: a constant (folded into the argument
// bind_zero_point passes) or, computed at run time, an s32 value a host step
// writes each run. nullopt for a constant 0 or none.
struct ZeroPoint {
  int32_t constant = 0;
  std::optional<ValueId> at_run_time;
};

ZeroPoint x_zero_point(ProgramBuilder& b, const NodeSpec& n) {
  ZeroPoint z;
  if (!n.has_input(2)) return z;
  if (n.small_constants.count(2)) {
    z.constant = scalar_zero_point(n, 2);
    return z;
  }
  const RunTimeZeroPoint r = run_time_zero_point(b, n, 2, "x_zero_point");
  z.at_run_time = r.s32;
  const bool is_signed = r.is_signed;
  b.add_host_step([is_signed](const std::vector<dnnl::memory>& m) { write_zero_point(m[0], m[1], is_signed); },
                  {r.source, r.s32}, n.label() + " (run-time zero point)", "zero point");
  return z;
}

}  // namespace

size_t build_conv_integer(ProgramBuilder& b, const NodeSpec& n, const Chain&) {
  // x, w, x_zero_point, w_zero_point
  const ValueId x = b.value_of(n.inputs[0]);
  const ValueId w = b.value_of(n.inputs[1]);
  if (b.desc(w).data_type() != memory::data_type::s8) n.fail("weights must be int8");
  const ConvShape s = conv_shape(n, b.dims(x), b.dims(w), false);
  const ValueId wv = weights_view(b, w, s.group, false);
  const ZeroPoint zero = x_zero_point(b, n);

  dnnl::primitive_attr attr = b.attr();
  if (zero.at_run_time) attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
  else request_zero_point(attr, DNNL_ARG_SRC, zero.constant);
  const Window& win = s.window;
  const memory::desc src(b.dims(x), b.desc(x).data_type(), memory::format_tag::any);
  const memory::desc wei(b.dims(wv), memory::data_type::s8, memory::format_tag::any);
  const memory::desc dst(s.dst_dims, memory::data_type::s32, memory::format_tag::any);
  const dnnl::convolution_forward::primitive_desc pd(
      dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src, wei,
                                      dst, win.strides, win.dnnl_dilations(), win.pad_begin, win.pad_end),
      attr, b.engine());

  const ValueId out = b.new_value(pd.dst_desc(), s.dst_dims, n.outputs[0]);
  std::vector<std::pair<int, ValueId>> args = {{DNNL_ARG_SRC, b.require(x, pd.src_desc())},
                                               {DNNL_ARG_WEIGHTS, b.require(wv, pd.weights_desc())},
                                               {DNNL_ARG_DST, out}};
  if (zero.at_run_time) args.emplace_back(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, *zero.at_run_time);
  else bind_zero_point(b, args, DNNL_ARG_SRC, zero.constant);
  b.add_step(dnnl::convolution_forward(pd), std::move(args), pd.scratchpad_desc(), n.label());
  b.name_last_step("convolution int8");
  b.define(n.outputs[0], out);
  return 0;
}

size_t build_cast(ProgramBuilder& b, const NodeSpec& n, const Chain&) {
  const ValueId x = b.value_of(n.inputs[0]);
  const std::vector<int64_t> dims = b.dims(x);
  const ValueId y = b.new_value(plain_desc(dims), dims, n.outputs[0]);
  b.add_reorder(x, y, n.label());
  b.define(n.outputs[0], y);
  return 0;
}

}  // namespace loom::onednn
