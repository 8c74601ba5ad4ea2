// Attention-23/24 (scaled dot-product attention with GQA, masks, causal
// masking, a KV cache and softcap), RotaryEmbedding-23 and ai.onnx.preview
// FlexAttention-1.
#include "opreg/schema_table.h"
#include "opreg/shape_functions.h"

namespace loom::opreg {
namespace {

using ::onnx::AttributeProto;
using ::onnx::OpSchema;
using Dim = ::onnx::TensorShapeProto::Dimension;

const std::vector<std::string>& mask_types() {
  static const std::vector<std::string> kTypes = [] {
    std::vector<std::string> t = float_types();
    t.push_back("tensor(bool)");
    return t;
  }();
  return kTypes;
}

// Q, K, V are 4-D [batch, heads, sequence, head size] or 3-D [batch,
// sequence, heads * head size] (the head counts then come from the
// q_num_heads / kv_num_heads attributes). Outputs: Y like Q with V's head
// size; present_key / present_value [batch, kv heads, past + kv sequence,
// head size]; qk_matmul_output [batch, q heads, q sequence, total sequence].
void infer_attention(::onnx::InferenceContext& ctx) {
  ::onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (ctx.getNumOutputs() > 1) ::onnx::propagateElemTypeFromInputToOutput(ctx, 1, 1);
  if (ctx.getNumOutputs() > 2) ::onnx::propagateElemTypeFromInputToOutput(ctx, 2, 2);
  if (ctx.getNumOutputs() > 3) ::onnx::propagateElemTypeFromInputToOutput(ctx, 0, 3);
  const auto* q = input_shape(ctx, 0);
  const auto* k = input_shape(ctx, 1);
  const auto* v = input_shape(ctx, 2);
  if (q == nullptr || k == nullptr || v == nullptr) return;
  const int rank = q->dim_size();
  if (rank != 3 && rank != 4) fail_shape_inference("Attention: Q must have rank 3 or 4, got ", rank);
  if (k->dim_size() != rank || v->dim_size() != rank)
    fail_shape_inference("Attention: Q, K and V must have the same rank");
  const int64_t q_heads = ::onnx::getAttribute(ctx, "q_num_heads", int64_t{0});
  const int64_t kv_heads = ::onnx::getAttribute(ctx, "kv_num_heads", int64_t{0});
  Dim q_h, kv_h, q_seq = q->dim(rank == 4 ? 2 : 1), kv_seq = k->dim(rank == 4 ? 2 : 1), k_size, v_size;
  if (rank == 4) {
    q_h = q->dim(1);
    kv_h = k->dim(1);
    k_size = k->dim(3);
    v_size = v->dim(3);
  } else {
    if (q_heads <= 0 || kv_heads <= 0)
      fail_shape_inference("Attention: 3-D inputs need the q_num_heads and kv_num_heads attributes");
    q_h = known_dim(q_heads);
    kv_h = known_dim(kv_heads);
    if (k->dim(2).has_dim_value()) k_size = known_dim(k->dim(2).dim_value() / kv_heads);
    if (v->dim(2).has_dim_value()) v_size = known_dim(v->dim(2).dim_value() / kv_heads);
  }
  if (rank == 4)
    set_output_dims(ctx, 0, {q->dim(0), q_h, q_seq, v_size});
  else
    set_output_dims(ctx, 0, {q->dim(0), q_seq, v_size.has_dim_value() ? q_h * v_size : Dim()});
  // The total sequence: past + new, known when both are.
  Dim total = kv_seq;
  if (ctx.getNumInputs() > 4 && ctx.getInputType(4) != nullptr) {
    const auto* past = input_shape(ctx, 4);
    if (past == nullptr || past->dim_size() != 4) return;
    total = past->dim(2).has_dim_value() && kv_seq.has_dim_value()
                ? known_dim(past->dim(2).dim_value() + kv_seq.dim_value())
                : Dim();
  }
  if (ctx.getNumOutputs() > 1 && ctx.getOutputType(1) != nullptr) set_output_dims(ctx, 1, {q->dim(0), kv_h, total, k_size});
  if (ctx.getNumOutputs() > 2 && ctx.getOutputType(2) != nullptr) set_output_dims(ctx, 2, {q->dim(0), kv_h, total, v_size});
  if (ctx.getNumOutputs() > 3 && ctx.getOutputType(3) != nullptr) set_output_dims(ctx, 3, {q->dim(0), q_h, q_seq, total});
}

OpSchema attention(int since) {
  OpSchema s;
  s.SetName("Attention").SetDomain("").SinceVersion(since).SetDoc("ONNX Attention (Loom's schema)");
  s.Input(0, "Q", "", "T1")
      .Input(1, "K", "", "T1")
      .Input(2, "V", "", "T2")
      .Input(3, "attn_mask", "", "U", OpSchema::Optional)
      .Input(4, "past_key", "", "T1", OpSchema::Optional)
      .Input(5, "past_value", "", "T2", OpSchema::Optional);
  if (since >= 24) s.Input(6, "nonpad_kv_seqlen", "", "tensor(int64)", OpSchema::Optional);
  s.Output(0, "Y", "", "T1")
      .Output(1, "present_key", "", "T1", OpSchema::Optional)
      .Output(2, "present_value", "", "T2", OpSchema::Optional)
      .Output(3, "qk_matmul_output", "", "T1", OpSchema::Optional)
      .Attr("is_causal", "", AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("kv_num_heads", "", AttributeProto::INT, false)
      .Attr("q_num_heads", "", AttributeProto::INT, false)
      .Attr("qk_matmul_output_mode", "", AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("scale", "", AttributeProto::FLOAT, false)
      .Attr("softcap", "", AttributeProto::FLOAT, 0.0f)
      .Attr("softmax_precision", "", AttributeProto::INT, false)
      .TypeConstraint("T1", float_types(), "Q and K")
      .TypeConstraint("T2", float_types(), "V")
      .TypeConstraint("U", mask_types(), "attn_mask: additive (float) or which positions attend (bool)")
      .TypeAndShapeInferenceFunction(infer_attention);
  return s;
}

OpSchema rotary_embedding() {
  OpSchema s;
  s.SetName("RotaryEmbedding").SetDomain("").SinceVersion(23).SetDoc("ONNX RotaryEmbedding (Loom's schema)");
  s.Input(0, "X", "", "T")
      .Input(1, "cos_cache", "", "T")
      .Input(2, "sin_cache", "", "T")
      .Input(3, "position_ids", "", "M", OpSchema::Optional)
      .Output(0, "Y", "", "T")
      .Attr("interleaved", "", AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("num_heads", "", AttributeProto::INT, false)
      .Attr("rotary_embedding_dim", "", AttributeProto::INT, static_cast<int64_t>(0))
      .TypeConstraint("T", float_types(), "")
      .TypeConstraint("M", {"tensor(int64)"}, "")
      .TypeAndShapeInferenceFunction([](::onnx::InferenceContext& ctx) { same_type_and_shape(ctx); });
  return s;
}

// ai.onnx.preview FlexAttention-1: Y [B, Hq, L, Ev] in V's type; the
// score_mod / prob_mod graphs map whole score tensors to the same shape.
OpSchema flex_attention() {
  OpSchema s;
  s.SetName("FlexAttention").SetDomain("ai.onnx.preview").SinceVersion(1).SetDoc("FlexAttention (Loom's schema)");
  s.Input(0, "Q", "", "T")
      .Input(1, "K", "", "T")
      .Input(2, "V", "", "T")
      .Output(0, "Y", "", "T")
      .Attr("scale", "", AttributeProto::FLOAT, false)
      .Attr("score_mod", "", AttributeProto::GRAPH, false)
      .Attr("prob_mod", "", AttributeProto::GRAPH, false)
      .Attr("softmax_precision", "", AttributeProto::INT, false)
      .TypeConstraint("T", float_types(), "")
      .TypeAndShapeInferenceFunction([](::onnx::InferenceContext& ctx) {
        ::onnx::propagateElemTypeFromInputToOutput(ctx, 2, 0);
        const auto* q = input_shape(ctx, 0);
        const auto* v = input_shape(ctx, 2);
        if (q == nullptr || v == nullptr) return;
        if (q->dim_size() != 4 || v->dim_size() != 4) fail_shape_inference("FlexAttention: Q and V must be 4-D");
        set_output_dims(ctx, 0, {q->dim(0), q->dim(1), q->dim(2), v->dim(3)});
      });
  return s;
}

}  // namespace

void add_attention_schemas(SchemaList& out) {
  out.push_back(attention(23));
  out.push_back(attention(24));
  out.push_back(rotary_embedding());
  out.push_back(flex_attention());
}

}  // namespace loom::opreg
