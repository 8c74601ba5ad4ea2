// Which nodes this EP claims: the static checks made at claim time, on
// inferred types and shapes and on attributes. A node passes only when its
// op, attributes and types are ones the program builder implements and the
// EP-vs-reference tests cover; everything else stays with later providers.
#pragma once

#include <string>

#include "node_spec.h"

namespace loom::onednn {

enum class OpRole {
  kUnsupported,
  kAnchor,     // Conv, ConvTranspose, MatMul, Gemm: take post-op chains
  kUnary,      // eltwise: fusable as a post-op
  kBinary,     // Add/Sub/Mul/Div/Max/Min: fusable as a post-op, or an anchor itself
  kCompute,    // pooling, normalisation, softmax, concat, transpose
  kReshape,    // Reshape / Flatten: reinterpret plain data, no compute
};

struct SupportVerdict {
  OpRole role = OpRole::kUnsupported;
  std::string reason;  // why not, when unsupported
};

SupportVerdict check_support(const NodeSpec& node);
// com.microsoft FusedConv / FusedGemm / FusedMatMul: checked as the Conv / Gemm /
// MatMul they extend plus their activation (ops/contrib_fused.cpp).
SupportVerdict check_fused_anchor(const NodeSpec& node);
// QLinearConv, QLinearMatMul, QuantizeLinear, DequantizeLinear: int8 data
// with constant quantization parameters; DynamicQuantizeLinear of float32
// (quant_support.cpp).
bool is_quantized_op(const std::string& op_type);
SupportVerdict check_quantized(const NodeSpec& node);
// com.microsoft MatMulIntegerToFloat (quant_support.cpp): int8 A with a
// scalar scale and zero point (constants or run-time values), constant 2-D
// int8 / uint8 B with constant scales and zero points (per tensor or per
// column), float32 output.
SupportVerdict check_matmul_integer_to_float(const NodeSpec& node);
// ReduceMean / Sum / Max / Min / L2 over float32 with constant axes
// (ops/reduce.cpp, with its builder).
bool is_reduce_op(const NodeSpec& node);
SupportVerdict check_reduce(const NodeSpec& node);
// LSTM and GRU of float32 with constant weights, default activations and
// every sequence full length (ops/recurrent.cpp).
SupportVerdict check_recurrent(const NodeSpec& node);
// Slice with unit steps, Split and Gather of float32 with constant indices (ops/slice.cpp).
SupportVerdict check_slice(const NodeSpec& node);
// Conv / ConvTranspose / pooling spatial attributes for 2-D kernels: "" when
// supported, else why not.
std::string check_window_2d(const NodeSpec& node);

}  // namespace loom::onednn
