// Every graph pass Loom has, by its factory; passes/pipeline.cpp puts them
// in the order sessions run them.
#pragma once

#include <memory>

#include "transform/framework/pass.h"

namespace loom::transform {

// Lowerings (level kDisabled) run at every level: they give ops their meaning.
std::unique_ptr<Pass> make_gradient_lowering();
std::unique_ptr<Pass> make_constant_folding();
std::unique_ptr<Pass> make_cast_elimination();
std::unique_ptr<Pass> make_transpose_reshape_simplification();
std::unique_ptr<Pass> make_common_subexpression_elimination();
std::unique_ptr<Pass> make_conv_bn_folding();
std::unique_ptr<Pass> make_conv_scale_folding();
std::unique_ptr<Pass> make_identity_elimination();
std::unique_ptr<Pass> make_dead_code_elimination();
std::unique_ptr<Pass> make_reshape_shape_folding();
// QDQ models: activations a QuantizeLinear clamps anyway (basic), and
// DQ -> Conv / MatMul -> Q into QLinearConv / QLinearMatMul (extended).
std::unique_ptr<Pass> make_quantized_activation_removal();
std::unique_ptr<Pass> make_qdq_fusion();
// DQ -> MatMul / Gemm with a float result that is not quantized again (a
// classifier's logits) into com.microsoft MatMulIntegerToFloat (extended).
std::unique_ptr<Pass> make_matmul_integer_to_float_fusion();
std::unique_ptr<Pass> make_dynamic_quant_matmul_fusion();  // quantize_dynamic's MatMulInteger chains
std::unique_ptr<Pass> make_shape_inference();
// Extended level: fusions into ONNX Runtime's contrib ops (com.microsoft).
std::unique_ptr<Pass> make_layer_norm_fusion();
std::unique_ptr<Pass> make_gelu_fusion();
std::unique_ptr<Pass> make_fast_gelu_fusion();
std::unique_ptr<Pass> make_attention_fusion();
std::unique_ptr<Pass> make_embed_layer_norm_fusion();
std::unique_ptr<Pass> make_skip_layer_norm_fusion();
std::unique_ptr<Pass> make_matmul_add_fusion();  // and the three below: ORT's MatMul/Conv/Gemm fusions
std::unique_ptr<Pass> make_fused_matmul_fusion();
std::unique_ptr<Pass> make_conv_activation_fusion();
// 1-D Conv as a 2-D one between two Reshapes (for providers that compile 2-D only).
std::unique_ptr<Pass> make_conv1d_as_conv2d();
std::unique_ptr<Pass> make_gemm_activation_fusion();
// The layout phase (transform::optimize_layout): 2-D convolutions and pools
// into channels-last loom.nhwc ops where their provider prefers them.
std::unique_ptr<Pass> make_channels_last();

}  // namespace loom::transform
