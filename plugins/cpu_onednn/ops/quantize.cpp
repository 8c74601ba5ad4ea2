// QuantizeLinear (f32 -> u8/s8) and DequantizeLinear (u8/s8 -> f32), per
// tensor or per axis (one common zero point), as oneDNN reorders with
// output scales and a zero point:
//   quantize:   y = saturate(round(x * (1 / y_scale)) + y_zero_point)
//   dequantize: y = (x - x_zero_point) * x_scale
// The reorder keeps x's layout, so blocked layouts flow through Q/DQ pairs
// between int8 primitives and the float ops around them. Rounding is half
// to even (the CPU's default mode, as ONNX requires); quantizing multiplies
// by the reciprocal scale where ONNX divides, which can move a value that
// lies within an ulp of a .5 tie by one step (see qlinear_test.cpp).
#include <oneapi/dnnl/dnnl.hpp>

#include "ops/op_builders.h"
#include "ops/operand_layout.h"
#include "ops/quant_params.h"

namespace loom::onednn {

size_t build_quantize_linear(ProgramBuilder& b, const NodeSpec& n, const Chain&) {
  const ValueId x = b.value_of(n.inputs[0]);
  const bool quantize = n.op_type == "QuantizeLinear";
  std::vector<float> scales = constant_scales(b, n, 1);
  const int32_t zero = common_zero_point(n, 2);
  int mask = 0;
  if (scales.size() != 1) {  // per axis (one element is per tensor, as for the reference EP)
    const int64_t rank = static_cast<int64_t>(b.dims(x).size());
    int64_t axis = n.attr_int("axis", 1);
    if (axis < -rank || axis >= rank) n.fail("axis out of range");
    if (axis < 0) axis += rank;
    if (b.dims(x)[axis] != static_cast<int64_t>(scales.size()))
      n.fail("scale has " + std::to_string(scales.size()) + " values for an axis of size " +
             std::to_string(b.dims(x)[axis]));
    mask = 1 << axis;
  }
  if (quantize)
    for (float& s : scales) s = 1.f / s;
  const dnnl::memory::desc out_desc = desc_with_type(b.desc(x), *dnnl_type_of(n.output_dtypes[0]));
  dnnl::primitive_attr attr = b.attr();
  attr.set_output_scales(mask, scales);
  const int zero_arg = quantize ? DNNL_ARG_TO : DNNL_ARG_FROM;
  request_zero_point(attr, zero_arg, zero);
  const dnnl::reorder::primitive_desc pd(b.engine(), b.desc(x), b.engine(), out_desc, attr);
  const ValueId out = b.new_value(out_desc, b.dims(x), n.outputs[0]);
  std::vector<std::pair<int, ValueId>> args = {{DNNL_ARG_FROM, x}, {DNNL_ARG_TO, out}};
  bind_zero_point(b, args, zero_arg, zero);
  b.add_step(dnnl::reorder(pd), std::move(args), pd.scratchpad_desc(), n.label());
  b.define(n.outputs[0], out);
  return 0;
}

}  // namespace loom::onednn
