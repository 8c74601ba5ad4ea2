// Linear layers as ONNX Runtime's quantize_dynamic writes them (operators/
// matmul.py, MatMulInteger): the activation through a DynamicQuantizeLinear
// (shared by every MatMul reading it), the float weights quantized once to
// an initializer, and
//
//   MatMulInteger(x_q, W_q, x_zp, W_zp) -> Cast<float> -> Mul(., Mul(x_scale, W_scale)) [-> Add(., bias)]
//
// Weights int8 symmetric (zero point 0), as quantize_dynamic's default, or
// uint8 asymmetric (QUInt8 weights: nonzero zero points); per tensor, or per
// column (per_channel=True: 1-D scales and zero points of N elements).
// Options that make near misses for the fusion tests are marked.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "common/model_builder.h"

namespace loom::testing {

struct DynamicLinear {
  std::string x;       // the float activation (quantized by dynamic_quantize)
  std::string output;  // the layer's float result
  int64_t k = 0, n = 0;
  bool signed_weights = true;  // int8 symmetric; false: uint8 with zero points
  bool per_channel = false;
  bool bias = true;
  bool w_zero_point = true;  // MatMulInteger reads W's zero point (quantize_dynamic writes it)
  uint32_t seed = 1;
  // Layout variants that still fuse.
  bool swap_mul_operands = false;  // Mul(scale, cast) and Mul(W_scale, x_scale)
  bool bias_first = false;         // Add(bias, .)
  // Near misses.
  int32_t cast_to = ::onnx::TensorProto::FLOAT;  // FLOAT16: a Cast to float16 (then a Cast back)
  bool weights_input = false;   // W_q is a graph input (not a constant)
  bool wrong_scale = false;     // Mul(x_scale, x_scale) instead of Mul(x_scale, W_scale)
  bool acc_read_elsewhere = false;  // the int32 accumulator is also a graph output
};

// Deterministic values in [-1, 1) from `seed` (a linear congruential generator).
inline std::vector<float> dq_values(size_t count, uint32_t seed) {
  std::vector<float> v(count);
  uint32_t s = seed * 2654435761u + 7u;
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    x = -1.f + 2.f * static_cast<float>(s >> 8) / static_cast<float>(1u << 24);
  }
  return v;
}

// x -> DynamicQuantizeLinear -> (x + "_q", x + "_scale", x + "_zp").
inline void dynamic_quantize(ModelBuilder& m, const std::string& x) {
  m.node("DynamicQuantizeLinear", {x}, {x + "_q", x + "_scale", x + "_zp"}, x + "_dql");
}

// Adds layer `l` (its DynamicQuantizeLinear must exist: dynamic_quantize(l.x)).
// Weights are random in [-1, 1) / sqrt(K), quantized as quantize_dynamic does.
inline void dynamic_linear(ModelBuilder& m, const DynamicLinear& l) {
  const std::string p = l.output + "_";
  const size_t kn = static_cast<size_t>(l.k * l.n);
  std::vector<float> w = dq_values(kn, l.seed);
  for (float& v : w) v /= std::sqrt(static_cast<float>(l.k));
  const int64_t groups = l.per_channel ? l.n : 1;
  std::vector<float> scales;
  std::vector<int32_t> zeros, wq(kn);
  for (int64_t c = 0; c < groups; ++c) {
    float lo = 0.f, hi = 0.f;
    for (size_t i = 0; i < kn; ++i)
      if (!l.per_channel || static_cast<int64_t>(i) % l.n == c) lo = std::min(lo, w[i]), hi = std::max(hi, w[i]);
    if (l.signed_weights) {
      scales.push_back(std::max(-lo, hi) / 127.f);
      zeros.push_back(0);
    } else {
      scales.push_back((hi - lo) / 255.f);
      zeros.push_back(static_cast<int32_t>(std::nearbyint(-lo / scales.back())));
    }
  }
  for (size_t i = 0; i < kn; ++i) {
    const size_t c = l.per_channel ? i % static_cast<size_t>(l.n) : 0;
    const int32_t q = static_cast<int32_t>(std::nearbyint(w[i] / scales[c])) + zeros[c];
    wq[i] = l.signed_weights ? std::clamp(q, -127, 127) : std::clamp(q, 0, 255);
  }
  const auto wtype = l.signed_weights ? ::onnx::TensorProto::INT8 : ::onnx::TensorProto::UINT8;
  const std::vector<int64_t> pdims = l.per_channel ? std::vector<int64_t>{l.n} : std::vector<int64_t>{};
  if (l.weights_input) m.input(p + "W_q", wtype, {l.k, l.n});
  else m.int_initializer(p + "W_q", wtype, {l.k, l.n}, wq);
  m.float_initializer(p + "W_scale", pdims, scales);
  m.int_initializer(p + "W_zp", wtype, pdims, zeros);
  std::vector<std::string> mmi_in = {l.x + "_q", p + "W_q", l.x + "_zp"};
  if (l.w_zero_point) mmi_in.push_back(p + "W_zp");
  m.node("MatMulInteger", std::vector<std::string>(mmi_in), std::vector<std::string>{p + "acc"}, p + "MatMul_quant");
  if (l.acc_read_elsewhere) m.output(p + "acc", ::onnx::TensorProto::INT32, {});
  std::string cast = p + "acc_float";
  auto& c = m.node("Cast", {p + "acc"}, {cast}, p + "cast");
  add_int_attr(c, "to", l.cast_to);
  if (l.cast_to != ::onnx::TensorProto::FLOAT) {
    auto& back = m.node("Cast", {cast}, {p + "acc_back"}, p + "cast_back");
    add_int_attr(back, "to", ::onnx::TensorProto::FLOAT);
    cast = p + "acc_back";
  }
  const std::string x_scale = l.x + "_scale", w_scale = l.wrong_scale ? x_scale : p + "W_scale";
  if (l.swap_mul_operands) m.node("Mul", {w_scale, x_scale}, {p + "scales"}, p + "scales_mul");
  else m.node("Mul", {x_scale, w_scale}, {p + "scales"}, p + "scales_mul");
  const std::string scaled = l.bias ? p + "scaled" : l.output;
  if (l.swap_mul_operands) m.node("Mul", {p + "scales", cast}, {scaled}, p + "output_scale_mul");
  else m.node("Mul", {cast, p + "scales"}, {scaled}, p + "output_scale_mul");
  if (!l.bias) return;
  std::vector<float> bias = dq_values(static_cast<size_t>(l.n), l.seed + 1000);
  for (float& b : bias) b *= 0.1f;
  m.float_initializer(p + "bias", {l.n}, bias);
  if (l.bias_first) m.node("Add", {p + "bias", scaled}, {l.output}, p + "add");
  else m.node("Add", {scaled, p + "bias"}, {l.output}, p + "add");
}

}  // namespace loom::testing
