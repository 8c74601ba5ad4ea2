// ONNX Runtime's contrib ops (com.microsoft) that Loom runs: the fused
// forms ORT's optimizer writes into saved models and Loom's own fusions
// make. ORT grows these ops without new versions (more optional inputs,
// more attributes), so the definitions declare what every version has and
// allow attributes beyond those: nodes are checked for their required
// inputs and attributes and the types of the attributes declared here
// (OpSource::kContrib). Output element types follow the formals; shapes
// come from Loom's in-process rules (opreg/infer/), so ONNX's inference
// is given element types only.
#include "opreg/schema_table.h"
#include "opreg/shape_functions.h"

namespace loom::opreg {
namespace {

using ::onnx::AttributeProto;
using ::onnx::OpSchema;

constexpr const char* kMs = "com.microsoft";

OpSchema contrib(const char* name) {
  OpSchema s;
  s.SetName(name).SetDomain(kMs).SinceVersion(1).SetDoc("ONNX Runtime contrib op (Loom's schema)");
  s.AllowUncheckedAttributes();
  return s;
}

void first_input_type(::onnx::InferenceContext& ctx) {
  if (ctx.getNumInputs() > 0 && ctx.getInputType(0) != nullptr)
    for (size_t j = 0; j < ctx.getNumOutputs(); ++j) ::onnx::propagateElemTypeFromInputToOutput(ctx, 0, j);
}

// X -> Y of X's type and shape (Gelu, QuickGelu, FastGelu, BiasGelu).
OpSchema activation(const char* name, bool bias_input, bool bias_optional) {
  OpSchema s = contrib(name);
  s.Input(0, "X", "", "T");
  if (bias_input) s.Input(1, "bias", "", "T", bias_optional ? OpSchema::Optional : OpSchema::Single);
  s.Output(0, "Y", "", "T")
      .TypeConstraint("T", float_types(), "")
      .TypeAndShapeInferenceFunction([](::onnx::InferenceContext& ctx) { same_type_and_shape(ctx); });
  return s;
}

OpSchema fused_conv() {
  OpSchema s = contrib("FusedConv");
  s.Input(0, "X", "", "T")
      .Input(1, "W", "", "T")
      .Input(2, "B", "", "T", OpSchema::Optional)
      .Input(3, "Z", "", "T", OpSchema::Optional)
      .Output(0, "Y", "", "T")
      .Attr("activation", "", AttributeProto::STRING, false)
      .Attr("activation_params", "", AttributeProto::FLOATS, false)
      .Attr("auto_pad", "", AttributeProto::STRING, false)
      .Attr("dilations", "", AttributeProto::INTS, false)
      .Attr("group", "", AttributeProto::INT, false)
      .Attr("kernel_shape", "", AttributeProto::INTS, false)
      .Attr("pads", "", AttributeProto::INTS, false)
      .Attr("strides", "", AttributeProto::INTS, false)
      .TypeConstraint("T", float_types(), "")
      .TypeAndShapeInferenceFunction(first_input_type);
  return s;
}

OpSchema fused_gemm() {
  OpSchema s = contrib("FusedGemm");
  s.Input(0, "A", "", "T")
      .Input(1, "B", "", "T")
      .Input(2, "C", "", "T", OpSchema::Optional)
      .Output(0, "Y", "", "T")
      .Attr("activation", "", AttributeProto::STRING, false)
      .Attr("alpha", "", AttributeProto::FLOAT, false)
      .Attr("beta", "", AttributeProto::FLOAT, false)
      .Attr("transA", "", AttributeProto::INT, false)
      .Attr("transB", "", AttributeProto::INT, false)
      .TypeConstraint("T", float_types(), "")
      .TypeAndShapeInferenceFunction(first_input_type);
  return s;
}

OpSchema fused_matmul() {
  OpSchema s = contrib("FusedMatMul");
  s.Input(0, "A", "", "T")
      .Input(1, "B", "", "T")
      .Output(0, "Y", "", "T")
      .Attr("alpha", "", AttributeProto::FLOAT, false)
      .Attr("transA", "", AttributeProto::INT, false)
      .Attr("transB", "", AttributeProto::INT, false)
      .Attr("transBatchA", "", AttributeProto::INT, false)
      .Attr("transBatchB", "", AttributeProto::INT, false)
      .TypeConstraint("T", float_types(), "")
      .TypeAndShapeInferenceFunction(first_input_type);
  return s;
}

OpSchema matmul_integer_to_float() {
  OpSchema s = contrib("MatMulIntegerToFloat");
  s.Input(0, "A", "", "T1")
      .Input(1, "B", "", "T2")
      .Input(2, "a_scale", "", "T3")
      .Input(3, "b_scale", "", "T3")
      .Input(4, "a_zero_point", "", "T1", OpSchema::Optional)
      .Input(5, "b_zero_point", "", "T2", OpSchema::Optional)
      .Input(6, "bias", "", "T3", OpSchema::Optional)
      .Output(0, "Y", "", "T3")
      .TypeConstraint("T1", {"tensor(int8)", "tensor(uint8)"}, "")
      .TypeConstraint("T2", {"tensor(int8)", "tensor(uint8)"}, "")
      .TypeConstraint("T3", {"tensor(float)", "tensor(float16)"}, "")
      .TypeAndShapeInferenceFunction([](::onnx::InferenceContext& ctx) {
        if (ctx.getNumInputs() > 2 && ctx.getInputType(2) != nullptr)
          ::onnx::propagateElemTypeFromInputToOutput(ctx, 2, 0);
      });
  return s;
}

OpSchema attention() {
  OpSchema s = contrib("Attention");
  s.Input(0, "input", "", "T")
      .Input(1, "weights", "", "T")
      .Input(2, "bias", "", "T", OpSchema::Optional)
      .Input(3, "mask_index", "", "M", OpSchema::Optional)
      .Input(4, "past", "", "T", OpSchema::Optional)
      .Input(5, "attention_bias", "", "T", OpSchema::Optional)
      .Input(6, "past_sequence_length", "", "M", OpSchema::Optional)
      .Output(0, "output", "", "T")
      .Output(1, "present", "", "T", OpSchema::Optional)
      .Attr("num_heads", "", AttributeProto::INT)
      .Attr("unidirectional", "", AttributeProto::INT, false)
      .Attr("qkv_hidden_sizes", "", AttributeProto::INTS, false)
      .Attr("mask_filter_value", "", AttributeProto::FLOAT, false)
      .Attr("scale", "", AttributeProto::FLOAT, false)
      .TypeConstraint("T", float_types(), "")
      .TypeConstraint("M", {"tensor(int32)"}, "")
      .TypeAndShapeInferenceFunction(first_input_type);
  return s;
}

// SkipLayerNormalization (gamma, beta, bias) and its simplified (RMS) form
// (gamma, bias): output, mean, inv_std_var, input + skip (+ bias).
OpSchema skip_layer_norm(const char* name, bool beta) {
  OpSchema s = contrib(name);
  int i = 0;
  s.Input(i++, "input", "", "T").Input(i++, "skip", "", "T").Input(i++, "gamma", "", "T");
  if (beta) s.Input(i++, "beta", "", "T", OpSchema::Optional);
  s.Input(i, "bias", "", "T", OpSchema::Optional)
      .Output(0, "output", "", "T")
      .Output(1, "mean", "", "U", OpSchema::Optional)
      .Output(2, "inv_std_var", "", "U", OpSchema::Optional)
      .Output(3, "input_skip_bias_sum", "", "T", OpSchema::Optional)
      .Attr("epsilon", "", AttributeProto::FLOAT, false)
      .TypeConstraint("T", float_types(), "")
      .TypeConstraint("U", {"tensor(float)"}, "")
      .TypeAndShapeInferenceFunction([](::onnx::InferenceContext& ctx) {
        same_type_and_shape(ctx, 0, 0);
        if (ctx.getNumOutputs() > 3) same_type_and_shape(ctx, 0, 3);
      });
  return s;
}

OpSchema embed_layer_norm() {
  OpSchema s = contrib("EmbedLayerNormalization");
  s.Input(0, "input_ids", "", "T1")
      .Input(1, "segment_ids", "", "T1", OpSchema::Optional)
      .Input(2, "word_embedding", "", "T")
      .Input(3, "position_embedding", "", "T")
      .Input(4, "segment_embedding", "", "T", OpSchema::Optional)
      .Input(5, "gamma", "", "T")
      .Input(6, "beta", "", "T")
      .Input(7, "mask", "", "T1", OpSchema::Optional)
      .Input(8, "position_ids", "", "T1", OpSchema::Optional)
      .Output(0, "output", "", "T")
      .Output(1, "mask_index", "", "T1", OpSchema::Optional)
      .Output(2, "embedding_sum", "", "T", OpSchema::Optional)
      .Attr("epsilon", "", AttributeProto::FLOAT, false)
      .Attr("mask_index_type", "", AttributeProto::INT, false)
      .TypeConstraint("T1", {"tensor(int32)"}, "")
      .TypeConstraint("T", float_types(), "")
      .TypeAndShapeInferenceFunction([](::onnx::InferenceContext& ctx) {
        if (ctx.getNumInputs() > 2 && ctx.getInputType(2) != nullptr) {
          ::onnx::propagateElemTypeFromInputToOutput(ctx, 2, 0);
          if (ctx.getNumOutputs() > 2) ::onnx::propagateElemTypeFromInputToOutput(ctx, 2, 2);
        }
        if (ctx.getNumOutputs() > 1) ::onnx::propagateElemTypeFromInputToOutput(ctx, 0, 1);
      });
  return s;
}

}  // namespace

void add_contrib_schemas(SchemaList& out) {
  out.push_back(activation("Gelu", false, false));
  out.push_back(activation("QuickGelu", false, false));
  out.back().Attr("alpha", "", AttributeProto::FLOAT, false);
  out.push_back(activation("FastGelu", true, true));
  out.push_back(activation("BiasGelu", true, false));
  out.push_back(fused_conv());
  out.push_back(fused_gemm());
  out.push_back(fused_matmul());
  out.push_back(matmul_integer_to_float());
  out.push_back(attention());
  out.push_back(skip_layer_norm("SkipLayerNormalization", true));
  out.push_back(skip_layer_norm("SkipSimplifiedLayerNormalization", false));
  out.push_back(embed_layer_norm());
}

}  // namespace loom::opreg
