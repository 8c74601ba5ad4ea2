// QLinearMatMul and com.microsoft MatMulIntegerToFloat with a constant 2-D
// int8 b as a oneDNN int8 matmul: a's leading dims folded into rows
// ({rows, K} x {K, N}), b packed once (format_tag::any), output scales
// a_scale * b_scale[n] (/ y_scale for QLinearMatMul) per tensor or per
// column, a zero point on a. oneDNN 2.6 computes QLinearMatMul's
// y = saturate(round(scale[n] * ((a - a_zp) * b)) + y_zp), as ONNX does;
// MatMulIntegerToFloat's float y = scale[n] * ((a - a_zp) * b) + bias[n],
// the bias a binary post-op (oneDNN 2.6 would add a primitive bias before
// the output scales).
//
// MatMulIntegerToFloat's a_scale and a_zero_point may be values computed at
// run time (quantize_dynamic's DynamicQuantizeLinear outputs): the
// primitive then takes run-time output scales and source zero point, and a
// host step before it forms a_scale * b_scale[n] (the reference EP's
// product, in its order) and the s32 zero point each run.
#include <oneapi/dnnl/dnnl.hpp>

#include "ops/op_builders.h"
#include "ops/quant_params.h"

namespace loom::onednn {
namespace {

// Where the operands of one int8 matmul sit among a node's inputs.
struct Int8MatMulInputs {
  size_t a, a_scale, a_zero, b, b_scale;
  std::optional<size_t> y_scale, y_zero;  // QLinearMatMul's quantized output
  std::optional<size_t> bias;             // MatMulIntegerToFloat's float bias
};

// The run-time output scales (a_scale * b_scale[n], one per column or one)
// and the s32 source zero point (when a_zero_point is given), written by a
// host step from the one-element a_scale / a_zero_point values.
struct RuntimeActivationParams {
  ValueId scales;
  std::optional<ValueId> zero_point;
};

RuntimeActivationParams runtime_activation_params(ProgramBuilder& b, const NodeSpec& n, size_t a_scale, size_t a_zero,
                                                  const std::vector<float>& b_scales) {
  using dnnl::memory;
  const ValueId s = b.plain(b.value_of(n.inputs[a_scale]));
  if (element_count(b.dims(s)) != 1 || b.desc(s).data_type() != memory::data_type::f32)
    n.fail("a_scale must be one float32 value");
  const int64_t count = static_cast<int64_t>(b_scales.size());
  RuntimeActivationParams out{b.new_value(plain_desc({count}), {count}), std::nullopt};
  std::vector<ValueId> args = {s, out.scales};
  bool signed_zero = false;
  if (n.has_input(a_zero)) {
    const RunTimeZeroPoint z = run_time_zero_point(b, n, a_zero, "a_zero_point");
    signed_zero = z.is_signed;
    out.zero_point = z.s32;
    args.push_back(z.source);
    args.push_back(z.s32);
  }
  b.add_host_step(
      [b_scales, signed_zero](const std::vector<dnnl::memory>& m) {
        const float a = *static_cast<const float*>(m[0].get_data_handle());
        auto* scales = static_cast<float*>(m[1].get_data_handle());
        for (size_t i = 0; i < b_scales.size(); ++i) scales[i] = a * b_scales[i];
        if (m.size() == 4) write_zero_point(m[2], m[3], signed_zero);
      },
      args, n.label() + " (run-time scales)");
  return out;
}

size_t build_int8_matmul(ProgramBuilder& b, const NodeSpec& n, const Int8MatMulInputs& in) {
  using dnnl::memory;
  const ValueId a = b.value_of(n.inputs[in.a]), w = b.value_of(n.inputs[in.b]);
  const std::vector<int64_t> da = b.dims(a), dw = b.dims(w);
  if (da.empty() || da.size() > 6) n.fail("a must have rank 1..6");
  if (dw.size() != 2) n.fail("b must be 2-D");
  const int64_t k = da.back(), cols = dw[1];
  if (k != dw[0]) n.fail("inner dimensions differ (" + std::to_string(k) + " vs " + std::to_string(dw[0]) + ")");
  std::vector<int64_t> onnx_dims(da.begin(), da.end() - 1);
  const int64_t rows = element_count(onnx_dims);
  onnx_dims.push_back(cols);
  const std::vector<float> b_scales = constant_scales(b, n, in.b_scale);
  if (b_scales.size() != 1 && static_cast<int64_t>(b_scales.size()) != cols)
    n.fail("b_scale must hold 1 or " + std::to_string(cols) + " values");
  const int32_t y_zero = in.y_zero ? scalar_zero_point(n, *in.y_zero) : 0;
  const bool runtime_a = !in.y_scale && (!n.small_constants.count(in.a_scale) ||
                                         (n.has_input(in.a_zero) && !n.small_constants.count(in.a_zero)));
  const int32_t a_zero = runtime_a ? 0 : scalar_zero_point(n, in.a_zero);
  const int scale_mask = b_scales.size() == 1 ? 0 : 1 << 1;

  dnnl::primitive_attr attr = b.attr();
  std::optional<RuntimeActivationParams> runtime;
  if (runtime_a) {
    runtime = runtime_activation_params(b, n, in.a_scale, in.a_zero, b_scales);
    attr.set_output_scales(scale_mask, {DNNL_RUNTIME_F32_VAL});
    if (runtime->zero_point) attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
  } else {
    attr.set_output_scales(scale_mask, requantize_scales(scalar_scale(n, in.a_scale), b_scales,
                                                         in.y_scale ? scalar_scale(n, *in.y_scale) : 1.f));
    request_zero_point(attr, DNNL_ARG_SRC, a_zero);
  }
  request_zero_point(attr, DNNL_ARG_DST, y_zero);
  std::optional<ValueId> bias;
  const memory::desc bias_desc({1, cols}, memory::data_type::f32, memory::format_tag::ab);
  if (in.bias && n.has_input(*in.bias)) {
    const ValueId c = b.value_of(n.inputs[*in.bias]);
    if (element_count(b.dims(c)) != cols) n.fail("bias must hold N = " + std::to_string(cols) + " values");
    bias = b.require(b.view(c, {1, cols}), bias_desc);
    dnnl::post_ops po;
    po.append_binary(dnnl::algorithm::binary_add, bias_desc);
    attr.set_post_ops(po);
  }
  const memory::data_type y_type = *dnnl_type_of(n.output_dtypes[0]);
  const ValueId src = b.view(a, {rows, k});
  const memory::desc wei({k, cols}, memory::data_type::s8, memory::format_tag::any);
  const memory::desc dst = plain_desc({rows, cols}, y_type);
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(b.desc(src), wei, dst), attr, b.engine());

  const ValueId out = b.new_value(plain_desc(onnx_dims, y_type), onnx_dims, n.outputs[0]);
  std::vector<std::pair<int, ValueId>> args = {{DNNL_ARG_SRC, b.require(src, pd.src_desc())},
                                               {DNNL_ARG_WEIGHTS, b.require(w, pd.weights_desc())},
                                               {DNNL_ARG_DST, b.alias(out, dst, {rows, cols})}};
  if (runtime) {
    args.emplace_back(DNNL_ARG_ATTR_OUTPUT_SCALES, runtime->scales);
    if (runtime->zero_point) args.emplace_back(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, *runtime->zero_point);
  } else {
    bind_zero_point(b, args, DNNL_ARG_SRC, a_zero);
  }
  bind_zero_point(b, args, DNNL_ARG_DST, y_zero);
  if (bias) args.emplace_back(DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, *bias);
  b.add_step(dnnl::matmul(pd), std::move(args), pd.scratchpad_desc(), n.label());
  b.define(n.outputs[0], out);
  return 0;
}

}  // namespace

size_t build_qlinear_matmul(ProgramBuilder& b, const NodeSpec& n, const Chain&) {
  // a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point
  return build_int8_matmul(b, n, {0, 1, 2, 3, 4, 6, 7, std::nullopt});
}

size_t build_matmul_integer_to_float(ProgramBuilder& b, const NodeSpec& n, const Chain&) {
  // A, B, a_scale, b_scale, a_zero_point, b_zero_point, bias (float32 output)
  if (n.input_dtypes[1] != LOOM_DTYPE_INT8 || (n.has_input(5) && !n.zero_constants.count(5)))
    return build_matmul_integer_to_float_shifted(b, n);
  return build_int8_matmul(b, n, {0, 2, 4, 1, 3, std::nullopt, std::nullopt, 6});
}

}  // namespace loom::onednn
