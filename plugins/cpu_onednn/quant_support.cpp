// Claims of the ONNX quantized ops (and com.microsoft MatMulIntegerToFloat,
// the int8 matmul with a float result). oneDNN 2.6's int8 convolution and
// matmul take u8/s8 sources, s8 weights, per-tensor or per-output-channel
// output scales fixed when the primitive is created, and zero points on
// source and destination only; the checks below admit exactly that. All
// are kCompute: they take no float post-op chains (the float chains that
// follow a DequantizeLinear are the DequantizeLinear's consumers, not
// theirs). The one chain a QLinearConv takes, a quantized residual DQ ->
// Add(DQ(r)) -> [Relu] -> Q, is planned separately (fusion_plan.h).
// MatMulIntegerToFloat also takes its activation's scale and zero point as
// values computed at run time (quantize_dynamic's DynamicQuantizeLinear
// outputs): oneDNN reads those as run-time output scales and zero points.
// DynamicQuantizeLinear itself is a host step. ConvInteger's x_zero_point
// too may be computed at run time; its int32 result is exact.
#include <cmath>

#include "op_support.h"

namespace loom::onednn {
namespace {

SupportVerdict no(std::string why) { return {OpRole::kUnsupported, std::move(why)}; }

bool is_int8(int32_t t) { return t == LOOM_DTYPE_UINT8 || t == LOOM_DTYPE_INT8; }

// Input i is a one-element constant read at claim time (scales and zero
// points are folded into the primitive when it is created).
bool scalar_constant(const NodeSpec& n, size_t i) {
  auto it = n.small_constants.find(i);
  return n.has_input(i) && it != n.small_constants.end() && it->second.size() == 1;
}

bool positive_finite(double v) { return std::isfinite(v) && v > 0; }

// The scalar scale at input `scale` and zero point at `zero` (optional when
// `zero_optional`) of one quantized tensor; "" when usable.
std::string check_scalar_params(const NodeSpec& n, size_t scale, size_t zero, bool zero_optional, const char* what) {
  if (!scalar_constant(n, scale) || n.input_dtypes[scale] != LOOM_DTYPE_FLOAT)
    return std::string(what) + " scale must be a float32 scalar constant";
  if (!positive_finite(n.small_constants.at(scale)[0])) return std::string(what) + " scale must be positive and finite";
  if (!n.has_input(zero)) return zero_optional ? "" : std::string(what) + " zero point is missing";
  if (!scalar_constant(n, zero)) return std::string(what) + " zero point must be a scalar constant";
  if (!is_int8(n.input_dtypes[zero])) return std::string(what) + " zero point must be uint8 or int8";
  return {};
}

// Weights at input `w` with scale `scale` (1 or `channels` elements) and
// zero point `zero`: constant int8, zero points all zero.
std::string check_weights(const NodeSpec& n, size_t w, size_t scale, size_t zero, int64_t channels, const char* op) {
  if (n.input_dtypes[w] != LOOM_DTYPE_INT8)
    return std::string("uint8 weights: oneDNN 2.6 int8 ") + op + " takes int8 (s8) weights only";
  if (!n.input_is_constant[w]) return "weights must be a constant initializer (packed once at compile time)";
  if (n.has_input(zero) && !n.zero_constants.count(zero))
    return "nonzero weight zero point: oneDNN 2.6 int8 " + std::string(op) +
           " supports zero points on source and destination only";
  if (!n.has_input(scale) || !n.input_is_constant[scale] || n.input_dtypes[scale] != LOOM_DTYPE_FLOAT)
    return "weight scale must be a float32 constant";
  const auto& shape = n.constant_shapes.at(scale);
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  if (shape.size() > 1 || (count != 1 && count != channels))
    return "weight scale must be a scalar or hold one value per output channel";
  if (auto it = n.small_constants.find(scale); it != n.small_constants.end())
    for (double v : it->second)
      if (!positive_finite(v)) return "weight scales must be positive and finite";
  return {};
}

// y's type is y_zero_point's (ONNX type constraint T3).
std::string check_output(const NodeSpec& n, size_t zero) {
  if (!is_int8(n.output_dtypes[0]) || (n.has_input(zero) && n.output_dtypes[0] != n.input_dtypes[zero]))
    return "output must be uint8 or int8, the type of y_zero_point";
  return {};
}

// An int8 2-D convolution's data and geometry: uint8 / int8 x (input 0),
// constant rank-4 weights at input `w`, a window oneDNN takes; "" when usable.
std::string check_int8_conv(const NodeSpec& n, size_t w) {
  if (!is_int8(n.input_dtypes[0])) return "x must be uint8 or int8";
  if (!n.input_is_constant[w]) return "weights must be a constant initializer (packed once at compile time)";
  const auto w_shape = n.constant_shapes.count(w) ? n.constant_shapes.at(w) : std::vector<int64_t>{};
  if (w_shape.size() != 4) return "only 2-D convolutions (rank-4 constant weights) are compiled";
  if (n.input_rank(0) && *n.input_rank(0) != 4) return "only 2-D convolutions (rank-4 input) are compiled";
  if (auto e = check_window_2d(n); !e.empty()) return e;
  if (n.attr_int("group", 1) < 1) return "group must be positive";
  return {};
}

SupportVerdict check_qlinear_conv(const NodeSpec& n) {
  // x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B
  if (n.inputs.size() < 8 || !n.has_input(3)) return no("missing inputs");
  if (auto e = check_int8_conv(n, 3); !e.empty()) return no(e);
  const auto& w_shape = n.constant_shapes.at(3);
  for (auto e : {check_scalar_params(n, 1, 2, false, "x"), check_scalar_params(n, 6, 7, false, "y"),
                 check_weights(n, 3, 4, 5, w_shape[0], "convolution"), check_output(n, 7)})
    if (!e.empty()) return no(e);
  if (n.has_input(8) && (n.input_dtypes[8] != LOOM_DTYPE_INT32 || n.input_rank(8) != 1u))
    return no("B must be a 1-D int32 tensor");
  return {OpRole::kCompute, {}};
}

// ConvInteger (2-D), the convolution quantize_dynamic writes: uint8 / int8 x
// whose scalar zero point may be computed at run time (DynamicQuantizeLinear's
// output), constant int8 weights with zero points all zero; the int32 result
// is exact, so the Cast and the Muls by the scales after it stay float ops.
SupportVerdict check_conv_integer(const NodeSpec& n) {
  // x, w, x_zero_point, w_zero_point
  if (!n.has_input(1)) return no("missing weights");
  if (auto e = check_int8_conv(n, 1); !e.empty()) return no(e);
  if (n.input_dtypes[1] != LOOM_DTYPE_INT8)
    return no("uint8 weights: oneDNN 2.6 int8 convolution takes int8 (s8) weights only");
  if (n.has_input(3) && !n.zero_constants.count(3))
    return no("nonzero weight zero point: oneDNN 2.6 int8 convolution supports zero points on source and destination "
              "only");
  if (n.has_input(2)) {
    if (n.input_dtypes[2] != n.input_dtypes[0]) return no("x_zero_point must have x's type");
    const auto& s = n.input_shapes[2];
    if (s && (s->size() > 1 || (s->size() == 1 && (*s)[0] != 1))) return no("x_zero_point must be one value");
  }
  if (n.output_dtypes[0] != LOOM_DTYPE_INT32 && n.output_dtypes[0] != LOOM_DTYPE_UNDEFINED)
    return no("output must be int32");
  return {OpRole::kCompute, {}};
}

SupportVerdict check_qlinear_matmul(const NodeSpec& n) {
  // a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point
  if (n.inputs.size() < 8 || !n.has_input(3)) return no("missing inputs");
  if (!is_int8(n.input_dtypes[0])) return no("a must be uint8 or int8");
  if (!n.input_is_constant[3]) return no("b must be a constant initializer (packed once at compile time)");
  if (const auto r = n.input_rank(0); r && (*r < 1 || *r > 6)) return no("a must have rank 1..6");
  const auto b_shape = n.constant_shapes.count(3) ? n.constant_shapes.at(3) : std::vector<int64_t>{};
  // Batched or 1-D b would need a per-batch (or vector) int8 matmul; only
  // the 2-D constant b of linear layers is compiled.
  if (b_shape.size() != 2) return no("b must be a 2-D constant (batched or 1-D b is left to the reference EP)");
  for (auto e : {check_scalar_params(n, 1, 2, false, "a"), check_scalar_params(n, 6, 7, false, "y"),
                 check_weights(n, 3, 4, 5, b_shape[1], "matmul"), check_output(n, 7)})
    if (!e.empty()) return no(e);
  return {OpRole::kCompute, {}};
}

// Q / DQ parameters: a scalar scale and zero point, or (opset 13+) a 1-D
// constant scale along `axis` with zero points that are all equal (oneDNN
// 2.6 reorders take per-dimension scales but one common zero point).
std::string check_q_dq_params(const NodeSpec& n, const char* what) {
  if (scalar_constant(n, 1)) return check_scalar_params(n, 1, 2, true, what);
  if (n.opset < 13 || !n.input_is_constant[1] || n.input_dtypes[1] != LOOM_DTYPE_FLOAT ||
      n.constant_shapes.at(1).size() != 1)
    return std::string(what) + " scale must be a float32 constant, scalar or 1-D (per axis)";
  if (auto it = n.small_constants.find(1); it != n.small_constants.end())
    for (double v : it->second)
      if (!positive_finite(v)) return std::string(what) + " scales must be positive and finite";
  if (const auto r = n.input_rank(0)) {
    const int64_t rank = static_cast<int64_t>(*r), axis = n.attr_int("axis", 1);
    if (axis < -rank || axis >= rank) return "axis out of range";
  }
  if (!n.has_input(2) || n.zero_constants.count(2)) return {};
  auto it = n.small_constants.find(2);
  if (it == n.small_constants.end() || !n.input_is_constant[2])
    return std::string(what) + " zero points must be constant";
  for (double v : it->second)
    if (v != it->second.front())
      return std::string("per-axis zero points that differ: oneDNN 2.6 reorders take one common zero point");
  if (!is_int8(n.input_dtypes[2])) return std::string(what) + " zero point must be uint8 or int8";
  return {};
}

SupportVerdict check_quantize(const NodeSpec& n) {
  // x, y_scale, y_zero_point (optional: uint8 zero)
  if (n.input_dtypes[0] != LOOM_DTYPE_FLOAT) return no("only float32 inputs are quantized here");
  if (auto e = check_q_dq_params(n, "y"); !e.empty()) return no(e);
  if (n.has_input(2) ? !is_int8(n.output_dtypes[0]) || n.output_dtypes[0] != n.input_dtypes[2]
                     : n.output_dtypes[0] != LOOM_DTYPE_UINT8)
    return no("output must be uint8 or int8, the type of y_zero_point");
  return {OpRole::kCompute, {}};
}

SupportVerdict check_dequantize(const NodeSpec& n) {
  // x, x_scale, x_zero_point (optional: zero)
  if (!is_int8(n.input_dtypes[0])) return no("only uint8 / int8 inputs are dequantized here (int32 is left to the reference EP)");
  if (auto e = check_q_dq_params(n, "x"); !e.empty()) return no(e);
  if (n.output_dtypes[0] != LOOM_DTYPE_FLOAT) return no("output must be float32");
  return {OpRole::kCompute, {}};
}

// Input i holds one element: a scalar constant, or a value computed at run
// time (DynamicQuantizeLinear's scale and zero point) whose inferred shape
// holds one element.
bool one_element(const NodeSpec& n, size_t i) {
  if (scalar_constant(n, i)) return true;
  if (i >= n.input_shapes.size() || !n.input_shapes[i]) return false;
  int64_t count = 1;
  for (int64_t d : *n.input_shapes[i]) count *= d;
  return count == 1;
}

// a_scale / a_zero_point: scalar constants (folded into the primitive), or
// one-element values computed at run time (DynamicQuantizeLinear's outputs:
// passed to oneDNN as run-time output scales and source zero point).
std::string check_activation_params(const NodeSpec& n) {
  if (scalar_constant(n, 2)) return check_scalar_params(n, 2, 4, true, "a");
  if (!one_element(n, 2) || n.input_dtypes[2] != LOOM_DTYPE_FLOAT)
    return "a_scale must be a float32 scalar (a constant, or a value of known shape)";
  if (!n.has_input(4)) return {};
  if (!one_element(n, 4)) return "a_zero_point must be a scalar (a constant, or a value of known shape)";
  if (n.input_dtypes[4] != n.input_dtypes[0]) return "a_zero_point must have A's type";
  return {};
}

// DynamicQuantizeLinear: float32 x to uint8 with the scale and zero point
// it computes (a host step, ops/dynamic_quantize.cpp). A known-empty x goes
// to another provider (oneDNN has no zero-sized memory).
SupportVerdict check_dynamic_quantize(const NodeSpec& n) {
  if (n.input_dtypes[0] != LOOM_DTYPE_FLOAT) return no("only float32 inputs are quantized here");
  if (n.outputs.size() != 3) return no("y, y_scale and y_zero_point must all be produced");
  for (const auto& o : n.outputs)
    if (o.empty()) return no("y, y_scale and y_zero_point must all be produced");
  if (const auto& s = n.input_shapes[0])
    for (int64_t d : *s)
      if (d == 0) return no("input is empty (zero-sized); oneDNN has no empty memory");
  return {OpRole::kCompute, {}};
}

}  // namespace

SupportVerdict check_matmul_integer_to_float(const NodeSpec& n) {
  // A, B, a_scale, b_scale, a_zero_point, b_zero_point, bias
  if (n.inputs.size() < 4 || !n.has_input(1)) return no("missing inputs");
  if (!is_int8(n.input_dtypes[0])) return no("A must be uint8 or int8");
  if (!n.input_is_constant[1]) return no("B must be a constant initializer (packed once at compile time)");
  if (const auto r = n.input_rank(0); r && (*r < 1 || *r > 6)) return no("A must have rank 1..6");
  const auto b_shape = n.constant_shapes.count(1) ? n.constant_shapes.at(1) : std::vector<int64_t>{};
  if (b_shape.size() != 2) return no("B must be a 2-D constant (batched or 1-D B is left to the reference EP)");
  // s8 weights with zero weight zero points run as oneDNN's int8 matmul;
  // uint8 weights or nonzero zero points as the shifted int8 matmul
  // (ops/matmul_integer_shifted.cpp), which needs them constant.
  if (n.input_dtypes[1] == LOOM_DTYPE_INT8 && (!n.has_input(5) || n.zero_constants.count(5))) {
    for (auto e : {check_activation_params(n), check_weights(n, 1, 3, 5, b_shape[1], "matmul")})
      if (!e.empty()) return no(e);
  } else {
    if (auto e = check_activation_params(n); !e.empty()) return no(e);
    if (!is_int8(n.input_dtypes[1])) return no("B must be uint8 or int8");
    if (n.has_input(5)) {
      if (!n.input_is_constant[5] || !n.constant_shapes.count(5) || n.input_dtypes[5] != n.input_dtypes[1])
        return no("b_zero_point must be a constant of B's type");
      const auto& zs = n.constant_shapes.at(5);
      const int64_t count = zs.empty() ? 1 : zs[0];
      if (zs.size() > 1 || (count != 1 && count != b_shape[1]))
        return no("b_zero_point must be a scalar or hold one value per column");
    }
    if (!n.input_is_constant[3] || !n.constant_shapes.count(3) || n.input_dtypes[3] != LOOM_DTYPE_FLOAT)
      return no("b_scale must be a float32 constant");
    const auto& ss = n.constant_shapes.at(3);
    const int64_t count = ss.empty() ? 1 : ss[0];
    if (ss.size() > 1 || (count != 1 && count != b_shape[1]))
      return no("b_scale must be a scalar or hold one value per column");
  }
  if (n.has_input(6)) {
    const auto& s = n.input_shapes[6];
    if (n.input_dtypes[6] != LOOM_DTYPE_FLOAT || !s || s->size() != 1 || (*s)[0] != b_shape[1])
      return no("bias must be float32 of shape [N]");
  }
  if (n.output_dtypes[0] != LOOM_DTYPE_FLOAT && n.output_dtypes[0] != LOOM_DTYPE_UNDEFINED)
    return no("output must be float32");
  return {OpRole::kCompute, {}};
}

bool is_quantized_op(const std::string& op) {
  return op == "QLinearConv" || op == "QLinearMatMul" || op == "QuantizeLinear" || op == "DequantizeLinear" ||
         op == "DynamicQuantizeLinear" || op == "ConvInteger";
}

SupportVerdict check_quantized(const NodeSpec& n) {
  if (!n.has_input(0) || n.outputs.empty() || n.outputs[0].empty()) return no("missing input or output");
  if (n.input_rank(0) && *n.input_rank(0) > 12) return no("rank above oneDNN's limit");
  if (n.op_type == "QLinearConv") return check_qlinear_conv(n);
  if (n.op_type == "ConvInteger") return check_conv_integer(n);
  if (n.op_type == "QLinearMatMul") return check_qlinear_matmul(n);
  if (n.op_type == "QuantizeLinear") return check_quantize(n);
  if (n.op_type == "DynamicQuantizeLinear") return check_dynamic_quantize(n);
  return check_dequantize(n);
}

}  // namespace loom::onednn
