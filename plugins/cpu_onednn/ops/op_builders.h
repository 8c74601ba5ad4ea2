// Op builders: each turns one node (plus, for anchors, a chain of trailing
// nodes it may absorb as post-ops) into steps of the program being built,
// and defines the node's output value. Each returns how many chain nodes it
// absorbed; the caller builds the rest standalone. Errors throw sdk::Error
// naming the node.
#pragma once

#include <vector>

#include "node_spec.h"
#include "program_builder.h"

namespace loom::onednn {

using Chain = std::vector<const NodeSpec*>;

size_t build_conv(ProgramBuilder& b, const NodeSpec& n, const Chain& chain);            // conv.cpp
size_t build_conv_transpose(ProgramBuilder& b, const NodeSpec& n, const Chain& chain);  // conv.cpp
size_t build_matmul(ProgramBuilder& b, const NodeSpec& n, const Chain& chain);          // matmul.cpp
size_t build_gemm(ProgramBuilder& b, const NodeSpec& n, const Chain& chain);            // matmul.cpp
size_t build_binary(ProgramBuilder& b, const NodeSpec& n, const Chain& chain);          // elementwise.cpp
size_t build_unary(ProgramBuilder& b, const NodeSpec& n, const Chain& chain);           // elementwise.cpp
size_t build_pool(ProgramBuilder& b, const NodeSpec& n, const Chain& chain);            // pooling.cpp
size_t build_batch_norm(ProgramBuilder& b, const NodeSpec& n, const Chain& chain);      // normalization.cpp
size_t build_layer_norm(ProgramBuilder& b, const NodeSpec& n, const Chain& chain);      // normalization.cpp
// LayerNormalization over the last dim of value `x` (gamma, beta: input
// names, beta may be "") into `out`, for contrib ops that end in one; the
// step is labelled with `n`'s name so errors point at it (contrib_norm.cpp).
size_t build_last_dim_layer_norm(ProgramBuilder& b, const NodeSpec& n, const std::string& x, const std::string& gamma,
                                 const std::string& beta, const std::string& out, float epsilon);
size_t build_softmax(ProgramBuilder& b, const NodeSpec& n, const Chain& chain);         // normalization.cpp
size_t build_concat(ProgramBuilder& b, const NodeSpec& n, const Chain& chain);          // layout.cpp
size_t build_reshape(ProgramBuilder& b, const NodeSpec& n, const Chain& chain);         // layout.cpp
size_t build_transpose(ProgramBuilder& b, const NodeSpec& n, const Chain& chain);       // layout.cpp
size_t build_resize(ProgramBuilder& b, const NodeSpec& n, const Chain& chain);          // resampling.cpp
size_t build_pad(ProgramBuilder& b, const NodeSpec& n, const Chain& chain);             // pad.cpp
size_t build_qlinear_conv(ProgramBuilder& b, const NodeSpec& n, const Chain& chain);    // qlinear_conv.cpp
size_t build_conv_integer(ProgramBuilder& b, const NodeSpec& n, const Chain& chain);    // conv_integer.cpp
size_t build_cast(ProgramBuilder& b, const NodeSpec& n, const Chain& chain);            // conv_integer.cpp
size_t build_reduce(ProgramBuilder& b, const NodeSpec& n, const Chain& chain);          // reduce.cpp
size_t build_recurrent(ProgramBuilder& b, const NodeSpec& n, const Chain& chain);       // recurrent.cpp: LSTM, GRU
size_t build_slice(ProgramBuilder& b, const NodeSpec& n, const Chain& chain);           // slice.cpp
size_t build_split(ProgramBuilder& b, const NodeSpec& n, const Chain& chain);           // slice.cpp
size_t build_gather(ProgramBuilder& b, const NodeSpec& n, const Chain& chain);          // slice.cpp
size_t build_qlinear_matmul(ProgramBuilder& b, const NodeSpec& n, const Chain& chain);  // qlinear_matmul.cpp
// QuantizeLinear and DequantizeLinear (quantize.cpp).
size_t build_quantize_linear(ProgramBuilder& b, const NodeSpec& n, const Chain& chain);
// DynamicQuantizeLinear as a host step (dynamic_quantize.cpp).
size_t build_dynamic_quantize_linear(ProgramBuilder& b, const NodeSpec& n, const Chain& chain);
// com.microsoft contrib ops (ONNX Runtime semantics).
size_t build_bias_activation(ProgramBuilder& b, const NodeSpec& n, const Chain& chain);  // contrib_gelu.cpp
size_t build_skip_layer_norm(ProgramBuilder& b, const NodeSpec& n, const Chain& chain);  // contrib_norm.cpp
size_t build_attention(ProgramBuilder& b, const NodeSpec& n, const Chain& chain);        // contrib_attention.cpp
size_t build_fused_anchor(ProgramBuilder& b, const NodeSpec& n, const Chain& chain);     // contrib_fused.cpp
size_t build_embed_layer_norm(ProgramBuilder& b, const NodeSpec& n, const Chain& chain);  // contrib_embed.cpp
// MatMulIntegerToFloat: QLinearMatMul's int8 matmul with a float32 dst, its
// activation's scale and zero point constants or run-time values (qlinear_matmul.cpp).
size_t build_matmul_integer_to_float(ProgramBuilder& b, const NodeSpec& n, const Chain& chain);
// ... with uint8 weights or nonzero weight zero points (matmul_integer_shifted.cpp).
size_t build_matmul_integer_to_float_shifted(ProgramBuilder& b, const NodeSpec& n);

// The builder for an op type (nullptr when none).
using OpBuilderFn = size_t (*)(ProgramBuilder&, const NodeSpec&, const Chain&);
OpBuilderFn op_builder_for(const std::string& op_type);
// Whether the builder of `op_type` declines some inputs it was claimed for
// (throws NOT_IMPLEMENTED: the host then runs the partition on its fallback
// provider): Resize / Upsample for run-time scales oneDNN does not match,
// Slice / Split for empty windows (a Gather's window is empty only where
// its data is, which an earlier step declined). A builder that starts to
// decline must be listed here.
bool op_may_decline(const std::string& op_type);

}  // namespace loom::onednn
