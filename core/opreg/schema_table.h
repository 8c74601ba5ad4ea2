// Loom's table of op schemas for the ops and versions Debian's ONNX 1.12
// library lacks (op_registry.h). One file per op family under schemas/
// adds its entries: each an ::onnx::OpSchema with its formals, type
// constraints, attributes and a type-and-shape function (shape_functions.h
// holds the pieces they share). Adding an op or a version is one more entry
// in its family's list.
#pragma once

#include <onnx/defs/schema.h>

#include <vector>

namespace loom::opreg {

using SchemaList = std::vector<::onnx::OpSchema>;

void add_attention_schemas(SchemaList& out);      // Attention-23/24, RotaryEmbedding-23, FlexAttention-1 (preview)
void add_recurrent_state_schemas(SchemaList& out);  // LinearAttention-27, CausalConvWithState-27
void add_normalization_schemas(SchemaList& out);  // RMSNormalization-23, GroupNormalization-18/21
void add_activation_schemas(SchemaList& out);     // Gelu-20, Mish-18/22, Swish-24, SwiGLU-28
void add_bitwise_schemas(SchemaList& out);        // BitwiseAnd/Or/Xor/Not-18, BitCast-26
void add_tensor_schemas(SchemaList& out);         // CumProd-26, TensorScatter-24, CenterCropPad-18
void add_spatial_schemas(SchemaList& out);        // Col2Im-18, AffineGrid-20, GridSample-20/22, DeformConv-19/22
void add_signal_schemas(SchemaList& out);         // DFT-20
void add_quantization_schemas(SchemaList& out);   // QuantizeLinear / DequantizeLinear 19 and 21
void add_optional_schemas(SchemaList& out);       // OptionalHasElement-18
void add_ml_schemas(SchemaList& out);             // ai.onnx.ml LabelEncoder-4, TreeEnsemble-5
void add_text_schemas(SchemaList& out);           // StringConcat-20, StringSplit-20, RegexFullMatch-20
void add_image_schemas(SchemaList& out);          // ImageDecoder-20
void add_contrib_schemas(SchemaList& out);        // com.microsoft: ONNX Runtime's fused ops Loom runs

}  // namespace loom::opreg
