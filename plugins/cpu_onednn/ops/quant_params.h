// Quantization parameters of the quantized ops, read when a program is
// built (op_support admitted them as constants), and how they reach oneDNN:
// scales as output scales fixed in the primitive attributes, zero points as
// run-time s32 arguments (oneDNN 2.6's int8 convolution kernels read zero
// points only from DNNL_ARG_ATTR_ZERO_POINTS arguments).
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "program_builder.h"

namespace loom::onednn {

// A QuantizeLinear / DequantizeLinear node's scale (input 1) and zero point
// (input 2; 0 when absent) when both are scalar constants and the scale is
// positive; nullopt otherwise (fusions then leave the node alone).
struct ScalarQuantParams {
  float scale = 0.f;
  int32_t zero_point = 0;
  bool operator==(const ScalarQuantParams& o) const { return scale == o.scale && zero_point == o.zero_point; }
  bool operator!=(const ScalarQuantParams& o) const { return !(*this == o); }
};
std::optional<ScalarQuantParams> scalar_quant_params(const NodeSpec& q);

// The scalar constant at input i (a scale).
float scalar_scale(const NodeSpec& n, size_t i);
// The scalar zero point at input i; 0 when the optional input is absent.
int32_t scalar_zero_point(const NodeSpec& n, size_t i);
// The zero point shared by every element of the constant at input i (a
// per-axis zero point whose values are equal); 0 when absent.
int32_t common_zero_point(const NodeSpec& n, size_t i);
// The constant scales at input i (1 or one per channel), of any size.
std::vector<float> constant_scales(ProgramBuilder& b, const NodeSpec& n, size_t i);
// in_scale * w_scale[c] / out_scale per channel, multiplied in the order
// the reference EP uses so both requantize with the same float scale.
std::vector<float> requantize_scales(float in_scale, const std::vector<float>& w_scales, float out_scale);

// Asks for a run-time zero point on `arg` (DNNL_ARG_SRC / DNNL_ARG_DST)
// when `zero_point` is nonzero; bind_zero_point then passes its value.
void request_zero_point(dnnl::primitive_attr& attr, int arg, int32_t zero_point);
void bind_zero_point(ProgramBuilder& b, std::vector<std::pair<int, ValueId>>& args, int arg, int32_t zero_point);

// A zero point computed at run time (DynamicQuantizeLinear's output) at
// input `i` of `n`: its one uint8 / int8 element (`source`, plain) and a new
// s32 value for oneDNN's run-time zero point, which a host step fills each
// run with write_zero_point. Fails naming `what` when it is not one such
// element.
struct RunTimeZeroPoint {
  ValueId source = 0, s32 = 0;
  bool is_signed = false;
};
RunTimeZeroPoint run_time_zero_point(ProgramBuilder& b, const NodeSpec& n, size_t i, const std::string& what);
inline void write_zero_point(const dnnl::memory& source, const dnnl::memory& s32, bool is_signed) {
  const void* z = source.get_data_handle();
  *static_cast<int32_t*>(s32.get_data_handle()) =
      is_signed ? *static_cast<const int8_t*>(z) : *static_cast<const uint8_t*>(z);
}

}  // namespace loom::onednn
