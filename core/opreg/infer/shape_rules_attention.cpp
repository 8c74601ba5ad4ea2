// Transformer ops: ONNX's Attention (23, 24), RotaryEmbedding, the
// statistics outputs of LayerNormalization, DynamicQuantizeLinear, and the
// recurrent-state ops of opset 27 (LinearAttention, CausalConvWithState).
#include <cstdint>

#include "opreg/infer/shape_rules.h"

namespace loom::opreg {
namespace {

using C = ShapeContext;

DimInfo divided(const DimInfo& d, int64_t by) {
  return d.value >= 0 && by > 0 && d.value % by == 0 ? known_dim(d.value / by) : unknown_dim();
}

DimInfo times(const DimInfo& a, const DimInfo& b) {
  int64_t v = 0;
  return a.value >= 0 && b.value >= 0 && !__builtin_mul_overflow(a.value, b.value, &v) ? known_dim(v) : unknown_dim();
}

// Q, K, V are 4-D [batch, heads, sequence, head size] or 3-D [batch,
// sequence, heads * head size] (head counts from q_num_heads /
// kv_num_heads). Y is like Q with V's head size; present_key / value are
// [batch, kv heads, past + kv sequence, head size]; qk_matmul_output is
// [batch, q heads, q sequence, total sequence].
void attention(const ir::Node& n, C& c) {
  auto q = c.shape(C::input(n, 0)), k = c.shape(C::input(n, 1)), v = c.shape(C::input(n, 2));
  if (!q || !k || !v) return;
  const size_t rank = q->size();
  if ((rank != 3 && rank != 4) || k->size() != rank || v->size() != rank) return;
  DimInfo q_h, kv_h, k_size, v_size;
  const DimInfo q_seq = (*q)[rank == 4 ? 2 : 1], kv_seq = (*k)[rank == 4 ? 2 : 1];
  if (rank == 4) {
    q_h = (*q)[1];
    kv_h = (*k)[1];
    k_size = (*k)[3];
    v_size = (*v)[3];
  } else {
    const int64_t qh = attr_int(n, "q_num_heads", 0), kvh = attr_int(n, "kv_num_heads", 0);
    if (qh <= 0 || kvh <= 0) return;
    q_h = known_dim(qh);
    kv_h = known_dim(kvh);
    k_size = divided((*k)[2], kvh);
    v_size = divided((*v)[2], kvh);
  }
  const DType q_type = c.dtype_of(C::input(n, 0)), v_type = c.dtype_of(C::input(n, 2));
  c.set(n.outputs[0], q_type, rank == 4 ? Shape{(*q)[0], q_h, q_seq, v_size} : Shape{(*q)[0], q_seq, times(q_h, v_size)});
  DimInfo total = kv_seq;
  if (!C::input(n, 4).empty()) {
    auto past = c.shape(C::input(n, 4));
    if (!past || past->size() != 4) return;
    int64_t sum = 0;
    total = (*past)[2].value >= 0 && kv_seq.value >= 0 && !__builtin_add_overflow((*past)[2].value, kv_seq.value, &sum)
                ? known_dim(sum)
                : unknown_dim();
  }
  if (n.outputs.size() > 1) c.set(n.outputs[1], c.dtype_of(C::input(n, 1)), {(*q)[0], kv_h, total, k_size});
  if (n.outputs.size() > 2) c.set(n.outputs[2], v_type, {(*q)[0], kv_h, total, v_size});
  if (n.outputs.size() > 3) c.set(n.outputs[3], q_type, {(*q)[0], q_h, q_seq, total});
}

void rotary_embedding(const ir::Node& n, C& c) {
  if (auto x = c.shape(C::input(n, 0))) c.set(n.outputs[0], c.dtype_of(C::input(n, 0)), *x);
}

// LayerNormalization: Y like X; Mean and InvStdDev keep X's dims before
// `axis` and have 1 from it on.
void layer_normalization(const ir::Node& n, C& c) {
  auto x = c.shape(C::input(n, 0));
  if (!x) return;
  c.set(n.outputs[0], c.dtype_of(C::input(n, 0)), *x);
  auto axis = normalize_axis(attr_int(n, "axis", -1), x->size());
  if (!axis) return;
  Shape stats = *x;
  for (size_t i = *axis; i < stats.size(); ++i) stats[i] = known_dim(1);
  for (size_t j = 1; j < n.outputs.size() && j < 3; ++j) c.set(n.outputs[j], DType::kUndefined, stats);
}

// DynamicQuantizeLinear: y like x (uint8), a scalar scale and zero point.
void dynamic_quantize_linear(const ir::Node& n, C& c) {
  auto x = c.shape(C::input(n, 0));
  if (x) c.set(n.outputs[0], DType::kUint8, *x);
  if (n.outputs.size() > 1) c.set(n.outputs[1], DType::kFloat, {});
  if (n.outputs.size() > 2) c.set(n.outputs[2], DType::kUint8, {});
}

// LinearAttention: query [B, T, Hq * dk], value [B, T, Hkv * dv]; output
// [B, T, Hq * dv]; present_state [B, Hkv, dk, dv] in past_state's type,
// else query's.
void linear_attention(const ir::Node& n, C& c) {
  auto q = c.shape(C::input(n, 0)), v = c.shape(C::input(n, 2));
  const int64_t hq = attr_int(n, "q_num_heads", 0), hkv = attr_int(n, "kv_num_heads", 0);
  if (!q || !v || q->size() != 3 || v->size() != 3 || hq <= 0 || hkv <= 0) return;
  const DimInfo dk = divided((*q)[2], hq), dv = divided((*v)[2], hkv);
  const DType dtype = c.dtype_of(C::input(n, 0));
  c.set(n.outputs[0], dtype, {(*q)[0], (*q)[1], times(known_dim(hq), dv)});
  if (n.outputs.size() > 1) {
    const DType state = C::input(n, 3).empty() ? dtype : c.dtype_of(C::input(n, 3));
    c.set(n.outputs[1], state, {(*q)[0], known_dim(hkv), dk, dv});
  }
}

// CausalConvWithState: output like input [B, C, T]; present_state
// [B, C, k - 1] for a weight [C, 1, k].
void causal_conv_with_state(const ir::Node& n, C& c) {
  auto x = c.shape(C::input(n, 0)), w = c.shape(C::input(n, 1));
  if (!x) return;
  const DType dtype = c.dtype_of(C::input(n, 0));
  c.set(n.outputs[0], dtype, *x);
  if (n.outputs.size() < 2 || !w || x->size() != 3 || w->size() != 3) return;
  const DimInfo k = (*w)[2].value >= 1 ? known_dim((*w)[2].value - 1) : unknown_dim();
  c.set(n.outputs[1], dtype, {(*x)[0], (*x)[1], k});
}

}  // namespace

void add_attention_shape_rules(ShapeRuleTable& t) {
  t[{"", "LinearAttention"}] = linear_attention;
  t[{"", "CausalConvWithState"}] = causal_conv_with_state;
  t[{"", "Attention"}] = attention;
  t[{"", "RotaryEmbedding"}] = rotary_embedding;
  t[{"", "LayerNormalization"}] = layer_normalization;
  t[{"", "DynamicQuantizeLinear"}] = dynamic_quantize_linear;
}

}  // namespace loom::opreg
