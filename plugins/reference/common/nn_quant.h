// Quantization helpers shared by the nn family: saturating round-half-to-even
// conversion and per-tensor / per-axis parameter lookup.
#pragma once

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "common/shape.h"

namespace loom::reference {

// saturate(round_half_to_even(v) + zero_point) into Q; NaN maps to zero_point.
template <class Q>
Q quantize_round(float v, int32_t zero_point) {
  float r = std::isnan(v) ? 0.0f : std::nearbyint(v);
  r += static_cast<float>(zero_point);
  const float lo = static_cast<float>(std::numeric_limits<Q>::lowest());
  const float hi = static_cast<float>(std::numeric_limits<Q>::max());
  if (r < lo) r = lo;
  if (r > hi) r = hi;
  return static_cast<Q>(r);
}

// Reads element i of a scale / zero-point tensor as float / int32, for any
// of the element types ONNX allows there.
inline float param_as_float(const sdk::ConstTensor& t, int64_t i) {
  switch (t.dtype()) {
    case LOOM_DTYPE_FLOAT: return t.data<float>()[i];
    case LOOM_DTYPE_DOUBLE: return static_cast<float>(t.data<double>()[i]);
    case LOOM_DTYPE_FLOAT16: return static_cast<float>(t.data<sdk::Float16>()[i]);
    case LOOM_DTYPE_BFLOAT16: return static_cast<float>(t.data<sdk::BFloat16>()[i]);
    default:
      throw sdk::Error("scale tensor of type " + sdk::dtype_name(t.dtype()) + " is not supported",
                       LOOM_STATUS_NOT_IMPLEMENTED);
  }
}
inline int32_t param_as_int(const sdk::ConstTensor& t, int64_t i) {
  switch (t.dtype()) {
    case LOOM_DTYPE_UINT8: return t.data<uint8_t>()[i];
    case LOOM_DTYPE_INT8: return t.data<int8_t>()[i];
    case LOOM_DTYPE_INT32: return t.data<int32_t>()[i];
    case LOOM_DTYPE_UINT16: return t.data<uint16_t>()[i];
    case LOOM_DTYPE_INT16: return t.data<int16_t>()[i];
    // ONNX's 8/4/2-bit types (Q / DQ from opset 19): the element's code,
    // which common/small_types.h's quantize / dequantize read.
    case LOOM_DTYPE_FLOAT8E4M3FN: case LOOM_DTYPE_FLOAT8E4M3FNUZ: case LOOM_DTYPE_FLOAT8E5M2:
    case LOOM_DTYPE_FLOAT8E5M2FNUZ: case LOOM_DTYPE_UINT4: case LOOM_DTYPE_INT4: case LOOM_DTYPE_FLOAT4E2M1:
    case LOOM_DTYPE_FLOAT8E8M0: case LOOM_DTYPE_UINT2: case LOOM_DTYPE_INT2:
      return static_cast<const uint8_t*>(t.raw_data())[i];
    default:
      throw sdk::Error("zero-point tensor of type " + sdk::dtype_name(t.dtype()) + " is not supported",
                       LOOM_STATUS_NOT_IMPLEMENTED);
  }
}

// Per-tensor (a single element) or per-channel (`channels` elements) quantization
// parameters, read once into plain vectors. An absent zero point reads as 0.
struct QuantParams {
  std::vector<float> scale;
  std::vector<int32_t> zero_point;

  float scale_at(int64_t c) const { return scale.size() == 1 ? scale[0] : scale[c]; }
  int32_t zero_at(int64_t c) const { return zero_point.size() == 1 ? zero_point[0] : zero_point[c]; }
};

// `scale` may be absent (then only zero points are read, with scale 1).
// Throws naming `what` when a tensor has neither 1 nor `channels` elements.
inline QuantParams read_quant_params(const sdk::ConstTensor& scale, const sdk::ConstTensor& zero,
                                     int64_t channels, const std::string& what) {
  QuantParams q;
  auto check = [&](const sdk::ConstTensor& t, const char* name) {
    const int64_t n = t.size();
    if (n != 1 && n != channels)
      sdk::fail_invalid(what + ": " + name + " has " + std::to_string(n) + " elements, expected 1 or " +
                        std::to_string(channels));
    return n;
  };
  if (scale.exists()) {
    const int64_t n = check(scale, "scale");
    for (int64_t i = 0; i < n; ++i) q.scale.push_back(param_as_float(scale, i));
  } else {
    q.scale.push_back(1.0f);
  }
  if (zero.exists()) {
    const int64_t n = check(zero, "zero point");
    for (int64_t i = 0; i < n; ++i) q.zero_point.push_back(param_as_int(zero, i));
  } else {
    q.zero_point.push_back(0);
  }
  return q;
}

}  // namespace loom::reference
