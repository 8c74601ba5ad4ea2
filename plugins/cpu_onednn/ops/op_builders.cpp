#include "ops/op_builders.h"

#include <map>

namespace loom::onednn {

bool op_may_decline(const std::string& op) {
  return op == "Resize" || op == "Upsample" || op == "Slice" || op == "Split";
}

OpBuilderFn op_builder_for(const std::string& op) {
  static const std::map<std::string, OpBuilderFn> table = {
      {"Conv", build_conv},
      {"ConvTranspose", build_conv_transpose},
      {"MatMul", build_matmul},
      {"Gemm", build_gemm},
      {"Add", build_binary},
      {"Sub", build_binary},
      {"Mul", build_binary},
      {"Div", build_binary},
      {"Max", build_binary},
      {"Min", build_binary},
      {"MaxPool", build_pool},
      {"AveragePool", build_pool},
      {"GlobalAveragePool", build_pool},
      {"GlobalMaxPool", build_pool},
      {"BatchNormalization", build_batch_norm},
      {"LayerNormalization", build_layer_norm},
      {"Softmax", build_softmax},
      {"Concat", build_concat},
      {"Reshape", build_reshape},
      {"Flatten", build_reshape},
      {"Squeeze", build_reshape},
      {"Unsqueeze", build_reshape},
      {"Identity", build_reshape},
      {"Transpose", build_transpose},
      {"Resize", build_resize},
      {"Upsample", build_resize},
      {"Pad", build_pad},
      {"QLinearConv", build_qlinear_conv},
      {"ConvInteger", build_conv_integer},
      {"Cast", build_cast},
      {"LSTM", build_recurrent},
      {"GRU", build_recurrent},
      {"ReduceMean", build_reduce},
      {"ReduceSum", build_reduce},
      {"ReduceMax", build_reduce},
      {"ReduceMin", build_reduce},
      {"ReduceL2", build_reduce},
      {"Slice", build_slice},
      {"Split", build_split},
      {"Gather", build_gather},
      {"QLinearMatMul", build_qlinear_matmul},
      {"QuantizeLinear", build_quantize_linear},
      {"DequantizeLinear", build_quantize_linear},
      {"DynamicQuantizeLinear", build_dynamic_quantize_linear},
      // com.microsoft (op_support admits these names only in that domain;
      // its Gelu is a unary eltwise like ONNX's).
      {"BiasGelu", build_bias_activation},
      {"FastGelu", build_bias_activation},
      {"SkipLayerNormalization", build_skip_layer_norm},
      {"Attention", build_attention},
      {"FusedConv", build_fused_anchor},
      {"FusedGemm", build_fused_anchor},
      {"FusedMatMul", build_fused_anchor},
      {"MatMulIntegerToFloat", build_matmul_integer_to_float},
      {"EmbedLayerNormalization", build_embed_layer_norm},
  };
  auto it = table.find(op);
  if (it != table.end()) return it->second;
  return build_unary;  // every other claimed op is a unary eltwise (checked in build_unary)
}

}  // namespace loom::onednn
