// QLinearMatMul with a constant 2-D int8 b as a oneDNN int8 matmul: a's
// leading dims folded into rows ({rows, K} x {K, N}), b packed once
// (format_tag::any), output scales a_scale * b_scale[n] / y_scale per
// tensor or per column, zero points on a and y. oneDNN 2.6 computes
// y = saturate(round(scale[n] * ((a - a_zp) * b)) + y_zp), as ONNX does.
#include <oneapi/dnnl/dnnl.hpp>

#include "ops/op_builders.h"
#include "ops/quant_params.h"

namespace loom::onednn {

size_t build_qlinear_matmul(ProgramBuilder& b, const NodeSpec& n, const Chain&) {
  using dnnl::memory;
  const ValueId a = b.value_of(n.inputs[0]), w = b.value_of(n.inputs[3]);
  const std::vector<int64_t> da = b.dims(a), dw = b.dims(w);
  if (da.empty() || da.size() > 6) n.fail("a must have rank 1..6");
  if (dw.size() != 2) n.fail("b must be 2-D");
  const int64_t k = da.back(), cols = dw[1];
  if (k != dw[0]) n.fail("inner dimensions differ (" + std::to_string(k) + " vs " + std::to_string(dw[0]) + ")");
  std::vector<int64_t> onnx_dims(da.begin(), da.end() - 1);
  const int64_t rows = element_count(onnx_dims);
  onnx_dims.push_back(cols);
  const std::vector<float> b_scales = constant_scales(b, n, 4);
  if (b_scales.size() != 1 && static_cast<int64_t>(b_scales.size()) != cols)
    n.fail("b_scale must hold 1 or " + std::to_string(cols) + " values");
  const int32_t a_zero = scalar_zero_point(n, 2), y_zero = scalar_zero_point(n, 7);

  dnnl::primitive_attr attr = b.attr();
  attr.set_output_scales(b_scales.size() == 1 ? 0 : 1 << 1,
                         requantize_scales(scalar_scale(n, 1), b_scales, scalar_scale(n, 6)));
  request_zero_point(attr, DNNL_ARG_SRC, a_zero);
  request_zero_point(attr, DNNL_ARG_DST, y_zero);
  const memory::data_type y_type = *dnnl_type_of(n.output_dtypes[0]);
  const ValueId src = b.view(a, {rows, k});
  const memory::desc wei({k, cols}, memory::data_type::s8, memory::format_tag::any);
  const memory::desc dst = plain_desc({rows, cols}, y_type);
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(b.desc(src), wei, dst), attr, b.engine());

  const ValueId out = b.new_value(plain_desc(onnx_dims, y_type), onnx_dims, n.outputs[0]);
  std::vector<std::pair<int, ValueId>> args = {{DNNL_ARG_SRC, b.require(src, pd.src_desc())},
                                               {DNNL_ARG_WEIGHTS, b.require(w, pd.weights_desc())},
                                               {DNNL_ARG_DST, b.alias(out, dst, {rows, cols})}};
  bind_zero_point(b, args, DNNL_ARG_SRC, a_zero);
  bind_zero_point(b, args, DNNL_ARG_DST, y_zero);
  b.add_step(dnnl::matmul(pd), std::move(args), pd.scratchpad_desc(), n.label());
  b.define(n.outputs[0], out);
  return 0;
}

}  // namespace loom::onednn
