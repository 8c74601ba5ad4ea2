// Opset-27 ops that carry a recurrent state between calls: LinearAttention
// and CausalConvWithState.
#include "opreg/schema_table.h"
#include "opreg/shape_functions.h"

namespace loom::opreg {
namespace {

using ::onnx::AttributeProto;
using ::onnx::OpSchema;
using Dim = ::onnx::TensorShapeProto::Dimension;

// output [B, T, Hq * dv] (dv = value's last dim / Hkv); present_state [B,
// Hkv, dk, dv] (dk = query's last dim / Hq) in past_state's type, else
// query's.
void infer_linear_attention(::onnx::InferenceContext& ctx) {
  ::onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (ctx.getNumOutputs() > 1)
    ::onnx::propagateElemTypeFromInputToOutput(ctx, ctx.getNumInputs() > 3 && ctx.getInputType(3) != nullptr ? 3 : 0, 1);
  const int64_t hq = ::onnx::getAttribute(ctx, "q_num_heads", int64_t{0});
  const int64_t hkv = ::onnx::getAttribute(ctx, "kv_num_heads", int64_t{0});
  const auto* q = input_shape(ctx, 0);
  const auto* v = input_shape(ctx, 2);
  if (q == nullptr || v == nullptr || hq <= 0 || hkv <= 0) return;
  if (q->dim_size() != 3 || v->dim_size() != 3) fail_shape_inference("LinearAttention: query and value must be 3-D");
  Dim dk, dv;
  if (q->dim(2).has_dim_value()) dk = known_dim(q->dim(2).dim_value() / hq);
  if (v->dim(2).has_dim_value()) dv = known_dim(v->dim(2).dim_value() / hkv);
  set_output_dims(ctx, 0, {q->dim(0), q->dim(1), dv.has_dim_value() ? known_dim(hq * dv.dim_value()) : Dim()});
  if (ctx.getNumOutputs() > 1) set_output_dims(ctx, 1, {q->dim(0), known_dim(hkv), dk, dv});
}

OpSchema linear_attention() {
  OpSchema s;
  s.SetName("LinearAttention").SetDomain("").SinceVersion(27).SetDoc("ONNX LinearAttention (Loom's schema)");
  s.Input(0, "query", "", "T")
      .Input(1, "key", "", "T")
      .Input(2, "value", "", "T")
      .Input(3, "past_state", "", "S", OpSchema::Optional)
      .Input(4, "decay", "", "T", OpSchema::Optional)
      .Input(5, "beta", "", "T", OpSchema::Optional)
      .Output(0, "output", "", "T")
      .Output(1, "present_state", "", "S", OpSchema::Optional)
      .Attr("chunk_size", "a tuning hint; no effect on the result", AttributeProto::INT, false)
      .Attr("kv_num_heads", "", AttributeProto::INT, false)
      .Attr("q_num_heads", "", AttributeProto::INT, false)
      .Attr("scale", "", AttributeProto::FLOAT, false)
      .Attr("update_rule", "linear, gated, delta or gated_delta", AttributeProto::STRING, std::string("gated_delta"))
      .TypeConstraint("T", float_types(), "")
      .TypeConstraint("S", float_types(), "the state's type")
      .TypeAndShapeInferenceFunction(infer_linear_attention);
  return s;
}

// output like input; present_state [B, C, k - 1] (k = weight's last dim).
void infer_causal_conv(::onnx::InferenceContext& ctx) {
  same_type_and_shape(ctx, 0, 0);
  if (ctx.getNumOutputs() < 2) return;
  ::onnx::propagateElemTypeFromInputToOutput(ctx, 0, 1);
  const auto* x = input_shape(ctx, 0);
  const auto* w = input_shape(ctx, 1);
  if (x == nullptr || w == nullptr) return;
  if (x->dim_size() != 3 || w->dim_size() != 3)
    fail_shape_inference("CausalConvWithState: input and weight must be 3-D");
  const Dim k = w->dim(2).has_dim_value() ? known_dim(w->dim(2).dim_value() - 1) : Dim();
  set_output_dims(ctx, 1, {x->dim(0), x->dim(1), k});
}

OpSchema causal_conv_with_state() {
  OpSchema s;
  s.SetName("CausalConvWithState").SetDomain("").SinceVersion(27).SetDoc("ONNX CausalConvWithState (Loom's schema)");
  s.Input(0, "input", "", "T")
      .Input(1, "weight", "", "T")
      .Input(2, "bias", "", "T", OpSchema::Optional)
      .Input(3, "past_state", "", "T", OpSchema::Optional)
      .Output(0, "output", "", "T")
      .Output(1, "present_state", "", "T", OpSchema::Optional)
      .Attr("activation", "none, silu or swish", AttributeProto::STRING, std::string("none"))
      .TypeConstraint("T", float_types(), "")
      .TypeAndShapeInferenceFunction(infer_causal_conv);
  return s;
}

}  // namespace

void add_recurrent_state_schemas(SchemaList& out) {
  out.push_back(linear_attention());
  out.push_back(causal_conv_with_state());
}

}  // namespace loom::opreg
