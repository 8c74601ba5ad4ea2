// com.microsoft Attention (ONNX Runtime CPU semantics, reference EP:
// plugins/reference/kernels/contrib_attention.cpp), without past / present /
// attention_bias / causal masking (op_support leaves those to the reference):
//   QKV    = input [B, S, Din] x weights [Din, Dq + Dk + Dv] + bias
//   scores = scale * Q K^T + mask_bias          per head, [B, N, S, S]
//   output = softmax(scores) V                  laid out [B, S, N * Hv]
// Five oneDNN steps, no explicit transposes:
//  1. one 2-D matmul for the projection (batch folded into rows, so the
//     weights are packed once, with the bias as the matmul bias);
//  2. a batched matmul over [B, N] reading Q and K^T as strided views of the
//     QKV rows ([B, S, 3, N, H] in memory), scale as an eltwise_linear
//     post-op and the mask bias [B, 1, 1, S] as a binary add post-op;
//  3. softmax over the last axis, in place;
//  4. a batched matmul probs x V writing the output through a strided view.
// The mask (int32) becomes an additive float bias once per run with oneDNN
// steps: where ORT replaces masked scores by mask_filter_value, adding it
// gives the same softmax within float rounding (the unmasked score is tiny
// next to 10000, and exp underflows to 0 either way).
//   2-D raw mask [B, S]: reorder to f32, clip to [0, 1] (ints: m > 0), then
//     linear -filter * m + filter.
//   1-D [B] end positions: binary_ge(iota [B, S], end [B, 1]) * filter.
//   2-D [B or 1, 1] with S != 1 (ORT's dummy mask): no mask.
#include <oneapi/dnnl/dnnl.hpp>

#include <cmath>

#include "ops/op_builders.h"
#include "ops/post_ops.h"

namespace loom::onednn {
namespace {

using dnnl::memory;

// A strided f32 view starting `offset` elements into its buffer.
memory::desc strided(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides, int64_t offset) {
  memory::desc d(dims, memory::data_type::f32, strides);
  d.data.offset0 = offset;
  return d;
}

// One eltwise step on `v` in place.
void eltwise_in_place(ProgramBuilder& b, const NodeSpec& n, ValueId v, dnnl::algorithm alg, float alpha, float beta) {
  dnnl::eltwise_forward::desc d(dnnl::prop_kind::forward_inference, alg, b.desc(v), alpha, beta);
  dnnl::eltwise_forward::primitive_desc pd(d, b.attr(), b.engine());
  b.add_step(dnnl::eltwise_forward(pd), {{DNNL_ARG_SRC, v}, {DNNL_ARG_DST, v}}, pd.scratchpad_desc(), n.label());
}

// The additive mask bias [B, 1, 1, S] (f32), or nullopt when there is no mask.
std::optional<ValueId> mask_bias(ProgramBuilder& b, const NodeSpec& n, int64_t B, int64_t S) {
  if (!n.has_input(3)) return std::nullopt;
  const ValueId m = b.value_of(n.inputs[3]);
  const std::vector<int64_t> md = b.dims(m);
  const float filter = n.attr_float("mask_filter_value", -10000.f);
  if (md.size() == 2 && md[0] == B && md[1] == S) {
    // int32 -> f32 (a reorder step; for a constant mask, done once now and
    // then copied, as the steps below work in place).
    ValueId bias = b.require(m, plain_desc(md));
    if (b.is_constant(bias)) {
      const ValueId copy = b.new_value(plain_desc(md), md);
      b.add_reorder(bias, copy, n.label() + " (mask)");
      bias = copy;
    }
    eltwise_in_place(b, n, bias, dnnl::algorithm::eltwise_clip, 0.f, 1.f);
    eltwise_in_place(b, n, bias, dnnl::algorithm::eltwise_linear, -filter, filter);
    return b.view(bias, {B, 1, 1, S});
  }
  if (md.size() == 2 && md[1] == 1 && (md[0] == B || md[0] == 1)) return std::nullopt;  // dummy mask
  if (md.size() == 1 && md[0] == B) {
    const ValueId end = b.view(b.require(m, plain_desc(md)), {B, 1});
    std::vector<float> iota(static_cast<size_t>(B * S));
    for (size_t i = 0; i < iota.size(); ++i) iota[i] = static_cast<float>(static_cast<int64_t>(i) % S);
    const ValueId t = b.new_constant(iota, {B, S});
    dnnl::post_ops po;
    po.append_eltwise(1.f, dnnl::algorithm::eltwise_linear, filter, 0.f);
    dnnl::primitive_attr attr = b.attr();
    attr.set_post_ops(po);
    dnnl::binary::desc d(dnnl::algorithm::binary_ge, b.desc(t), b.desc(end), plain_desc({B, S}));
    dnnl::binary::primitive_desc pd(d, attr, b.engine());
    const ValueId bias = b.new_value(plain_desc({B, S}), {B, S});
    b.add_step(dnnl::binary(pd), {{DNNL_ARG_SRC_0, t}, {DNNL_ARG_SRC_1, end}, {DNNL_ARG_DST, bias}},
               pd.scratchpad_desc(), n.label() + " (mask)");
    return b.view(bias, {B, 1, 1, S});
  }
  n.fail("mask_index of shape [" + [&] {
    std::string s;
    for (int64_t v : md) s += (s.empty() ? "" : ", ") + std::to_string(v);
    return s;
  }() + "] is not one this EP compiles (1-D [batch] or 2-D [batch, sequence])");
}

}  // namespace

size_t build_attention(ProgramBuilder& b, const NodeSpec& n, const Chain&) {
  const ValueId x = b.value_of(n.inputs[0]);
  ValueId w = b.value_of(n.inputs[1]);
  const std::vector<int64_t> xd = b.dims(x), wd = b.dims(w);
  if (xd.size() != 3) n.fail("input must be 3-D [batch, sequence, hidden]");
  if (wd.size() != 2 || wd[0] != xd[2]) n.fail("weights must be 2-D [" + std::to_string(xd[2]) + ", D + D + D_v]");
  const int64_t B = xd[0], S = xd[1], Din = xd[2], W = wd[1], N = n.attr_int("num_heads", 0);
  int64_t Dq = W / 3, Dk = Dq, Dv = Dq;
  const auto qkv = n.attr_ints("qkv_hidden_sizes");
  if (qkv.size() == 3) Dq = qkv[0], Dk = qkv[1], Dv = qkv[2];
  else if (W % 3 != 0) n.fail("weights dimension 1 (" + std::to_string(W) + ") is not divisible by 3");
  if (Dq != Dk || Dq + Dk + Dv != W || N <= 0 || Dq <= 0 || Dv <= 0 || Dq % N != 0 || Dv % N != 0)
    n.fail("hidden sizes must be positive, sum to the weights' width and divide by num_heads");
  const int64_t H = Dq / N, Hv = Dv / N, rows = B * S;
  const float scale_attr = n.attr_float("scale", 0.f);
  const float scale = scale_attr == 0.f ? static_cast<float>(1.0 / std::sqrt(static_cast<double>(H))) : scale_attr;

  // 1. QKV projection [B*S, W] = x [B*S, Din] x w + bias.
  const ValueId src = b.view(x, {rows, Din});
  w = b.view(w, {Din, W});
  std::optional<ValueId> bias;
  if (n.has_input(2)) {
    if (b.dims(b.value_of(n.inputs[2])) != std::vector<int64_t>{W}) n.fail("bias must be 1-D [" + std::to_string(W) + "]");
    bias = b.view(b.value_of(n.inputs[2]), {1, W});
  }
  const memory::desc qkv_desc = plain_desc({rows, W});
  const memory::desc wei = b.is_constant(w) ? memory::desc({Din, W}, memory::data_type::f32, memory::format_tag::any)
                                            : b.desc(w);
  auto proj_pd = bias ? dnnl::matmul::primitive_desc(dnnl::matmul::desc(b.desc(src), wei, b.desc(*bias), qkv_desc),
                                                     b.attr(), b.engine())
                      : dnnl::matmul::primitive_desc(dnnl::matmul::desc(b.desc(src), wei, qkv_desc), b.attr(), b.engine());
  const ValueId qkv_v = b.new_value(qkv_desc, {rows, W});
  std::vector<std::pair<int, ValueId>> proj_args = {{DNNL_ARG_SRC, src},
                                                    {DNNL_ARG_WEIGHTS, b.require(w, proj_pd.weights_desc())},
                                                    {DNNL_ARG_DST, qkv_v}};
  if (bias) proj_args.emplace_back(DNNL_ARG_BIAS, b.require(*bias, proj_pd.bias_desc()));
  b.add_step(dnnl::matmul(proj_pd), std::move(proj_args), proj_pd.scratchpad_desc(), n.label() + " (QKV)");

  // 2. scores [B, N, S, S] = scale * Q K^T + mask: Q[b, n, s, h] is element
  // (b * S + s) * W + n * H + h of the QKV rows, K^T[b, n, h, t] the same at
  // offset Dq with t for s.
  const ValueId q = b.alias(qkv_v, strided({B, N, S, H}, {S * W, H, W, 1}, 0), {B, N, S, H});
  const ValueId kt = b.alias(qkv_v, strided({B, N, H, S}, {S * W, H, 1, W}, Dq), {B, N, H, S});
  const ValueId v = b.alias(qkv_v, strided({B, N, S, Hv}, {S * W, Hv, W, 1}, Dq + Dk), {B, N, S, Hv});
  const std::optional<ValueId> mask = mask_bias(b, n, B, S);
  const std::vector<int64_t> sd = {B, N, S, S};
  const ValueId scores = b.new_value(plain_desc(sd), sd);
  auto scores_pd = [&](bool with_mask) {
    dnnl::post_ops po;
    po.append_eltwise(1.f, dnnl::algorithm::eltwise_linear, scale, 0.f);
    if (with_mask) po.append_binary(dnnl::algorithm::binary_add, b.desc(*mask));
    dnnl::primitive_attr attr = b.attr();
    attr.set_post_ops(po);
    return dnnl::matmul::primitive_desc(dnnl::matmul::desc(b.desc(q), b.desc(kt), plain_desc(sd)), attr, b.engine());
  };
  // The mask as a post-op where oneDNN has an optimised kernel for that
  // broadcast; else a binary add after the matmul.
  bool mask_fused = false;
  dnnl::matmul::primitive_desc qk_pd;
  if (mask) {
    try {
      qk_pd = scores_pd(true);
      mask_fused = !is_reference_impl(qk_pd.impl_info_str());
    } catch (const dnnl::error&) {
    }
  }
  if (!mask_fused) qk_pd = scores_pd(false);
  std::vector<std::pair<int, ValueId>> qk_args = {{DNNL_ARG_SRC, q}, {DNNL_ARG_WEIGHTS, kt}, {DNNL_ARG_DST, scores}};
  if (mask_fused) qk_args.emplace_back(DNNL_ARG_ATTR_MULTIPLE_POST_OP(1) | DNNL_ARG_SRC_1, *mask);
  b.add_step(dnnl::matmul(qk_pd), std::move(qk_args), qk_pd.scratchpad_desc(), n.label() + " (Q K^T)");
  if (mask && !mask_fused) {
    dnnl::binary::desc d(dnnl::algorithm::binary_add, b.desc(scores), b.desc(*mask), b.desc(scores));
    dnnl::binary::primitive_desc pd(d, b.attr(), b.engine());
    b.add_step(dnnl::binary(pd), {{DNNL_ARG_SRC_0, scores}, {DNNL_ARG_SRC_1, *mask}, {DNNL_ARG_DST, scores}},
               pd.scratchpad_desc(), n.label() + " (mask)");
  }

  // 3. softmax over keys, in place.
  dnnl::softmax_forward::primitive_desc sm_pd(
      dnnl::softmax_forward::desc(dnnl::prop_kind::forward_inference, b.desc(scores), 3), b.attr(), b.engine());
  b.add_step(dnnl::softmax_forward(sm_pd), {{DNNL_ARG_SRC, scores}, {DNNL_ARG_DST, scores}}, sm_pd.scratchpad_desc(),
             n.label() + " (softmax)");

  // 4. output[b, s, n * Hv + h] = probs [B, N, S, S] x V [B, N, S, Hv].
  const ValueId out = b.new_value(plain_desc({B, S, Dv}), {B, S, Dv}, n.outputs[0]);
  const ValueId out_heads = b.alias(out, strided({B, N, S, Hv}, {S * Dv, Hv, Dv, 1}, 0), {B, N, S, Hv});
  dnnl::matmul::primitive_desc pv_pd(dnnl::matmul::desc(b.desc(scores), b.desc(v), b.desc(out_heads)), b.attr(),
                                     b.engine());
  b.add_step(dnnl::matmul(pv_pd), {{DNNL_ARG_SRC, scores}, {DNNL_ARG_WEIGHTS, v}, {DNNL_ARG_DST, out_heads}},
             pv_pd.scratchpad_desc(), n.label() + " (probs V)");
  b.define(n.outputs[0], out);
  return 0;
}

}  // namespace loom::onednn
