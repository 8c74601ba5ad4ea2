// ai.onnx.preview FlexAttention (1): scaled dot-product attention whose
// scores and probabilities pass through optional graph attributes --
// score_mod (scores [B, Hq, L, S] -> same) before the softmax, prob_mod
// after it -- run by the host on whole tensors. Q [B, Hq, L, E], K [B, Hkv,
// S, E], V [B, Hkv, S, Ev], each kv head serving Hq / Hkv consecutive q
// heads. Scores are handed to the graphs as float32 (float64 for double
// inputs, or softmax_precision's type); a row the graphs mask entirely
// gets zero weights.
#include <algorithm>
#include <cmath>
#include <limits>

#include "common/reduction_common.h"
#include "kernels/flow_internal.h"
#include "kernels/nn_internal.h"

namespace loom::reference {
namespace {

using sdk::KernelContext;
using sdk::OwnedValue;
const std::string kOp = "FlexAttention";

// Runs graph attribute `attr` on `values` (shape `dims`, type `dtype`) when
// the node has it; the result must keep the shape.
void apply_mod(KernelContext& ctx, const char* attr, const Shape& dims, int32_t dtype, double* values, int64_t count) {
  if (ctx.node().attr_graph(attr) == nullptr) return;
  OwnedValue in = OwnedValue::tensor(dtype, dims);
  sdk::Tensor t = in.mutable_tensor();
  dispatch<TypeList<float, double>>(dtype, kOp, [&](auto tag) {
    using T = decltype(tag);
    T* p = t.mutable_data<T>();
    for (int64_t i = 0; i < count; ++i) p[i] = static_cast<T>(values[i]);
  });
  std::vector<OwnedValue> out = ctx.run_subgraph(attr, {in.view()}, 1);
  const sdk::ConstTensor r = flow::tensor_of(out[0].view(), kOp.c_str(), attr);
  if (r.shape() != dims)
    sdk::fail_invalid(kOp + ": " + attr + " returned shape " + shape_string(r.shape()) + ", expected " + shape_string(dims));
  dispatch<FloatTypes>(r.dtype(), kOp, [&](auto tag) {
    using T = decltype(tag);
    const T* p = r.data<T>();
    for (int64_t i = 0; i < count; ++i) values[i] = static_cast<double>(p[i]);
  });
}

void flex_attention(KernelContext& ctx) {
  const sdk::Node node = ctx.node();
  const sdk::ConstTensor q_t = ctx.required_input(0), k_t = ctx.required_input(1), v_t = ctx.required_input(2);
  const Shape qs = q_t.shape(), ks = k_t.shape(), vs = v_t.shape();
  if (qs.size() != 4 || ks.size() != 4 || vs.size() != 4)
    sdk::fail_invalid(kOp + ": Q, K and V must be 4-D [batch, heads, sequence, size]");
  const int64_t B = qs[0], Hq = qs[1], L = qs[2], E = qs[3], Hkv = ks[1], S = ks[2], Ev = vs[3];
  if (ks[0] != B || vs[0] != B || vs[1] != Hkv || vs[2] != S || ks[3] != E)
    sdk::fail_invalid(kOp + ": Q " + shape_string(qs) + ", K " + shape_string(ks) + " and V " + shape_string(vs) +
                      " are inconsistent");
  if (Hkv <= 0 || Hq % Hkv != 0)
    sdk::fail_invalid(kOp + ": q heads (" + std::to_string(Hq) + ") must be a multiple of kv heads (" + std::to_string(Hkv) + ")");
  const auto scale_attr = node.find_float("scale");
  const double scale = scale_attr ? *scale_attr : 1.0 / std::sqrt(static_cast<double>(E));
  int32_t compute = q_t.dtype() == LOOM_DTYPE_DOUBLE ? LOOM_DTYPE_DOUBLE : LOOM_DTYPE_FLOAT;
  if (const auto p = node.find_int("softmax_precision")) {
    if (*p != LOOM_DTYPE_FLOAT && *p != LOOM_DTYPE_DOUBLE)
      sdk::fail_invalid(kOp + ": softmax_precision " + std::to_string(*p) + " is not supported (float or double)");
    compute = static_cast<int32_t>(*p);
  }
  const Shape score_shape = {B, Hq, L, S};
  const int64_t count = sdk::checked_element_count(score_shape, kOp + ": scores");
  // The output, then the scores, within the run's limits (L x S can be far
  // larger than any input).
  const Shape y_shape = {B, Hq, L, Ev};
  const int64_t y_count = sdk::checked_element_count(y_shape, kOp + ": output");
  sdk::Tensor y_t = ctx.output(0, y_shape, v_t.dtype());
  double* scores = ctx.scratch<double>(count, kOp + ": scores");
  double* y = ctx.scratch<double>(y_count, kOp + ": output");
  std::fill(y, y + y_count, 0.0);
  const std::vector<double> q = float_tensor_to_doubles(q_t, kOp), k = float_tensor_to_doubles(k_t, kOp),
                            v = float_tensor_to_doubles(v_t, kOp);
  const int64_t group = Hq / Hkv;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hq; ++h)
      for (int64_t i = 0; i < L; ++i)
        for (int64_t j = 0; j < S; ++j) {
          const double* qr = q.data() + ((b * Hq + h) * L + i) * E;
          const double* kr = k.data() + ((b * Hkv + h / group) * S + j) * E;
          double s = 0;
          for (int64_t e = 0; e < E; ++e) s += qr[e] * kr[e];
          scores[((b * Hq + h) * L + i) * S + j] = s * scale;
        }
  apply_mod(ctx, "score_mod", score_shape, compute, scores, count);
  for (int64_t r = 0; r < B * Hq * L; ++r) {
    double* row = scores + r * S;
    double max = -std::numeric_limits<double>::infinity(), sum = 0;
    for (int64_t j = 0; j < S; ++j) max = std::max(max, row[j]);
    for (int64_t j = 0; j < S; ++j) sum += (row[j] = std::isinf(max) && max < 0 ? 0.0 : std::exp(row[j] - max));
    for (int64_t j = 0; j < S && sum > 0; ++j) row[j] /= sum;
  }
  apply_mod(ctx, "prob_mod", score_shape, compute, scores, count);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hq; ++h)
      for (int64_t i = 0; i < L; ++i) {
        const double* p = scores + ((b * Hq + h) * L + i) * S;
        double* yr = y + ((b * Hq + h) * L + i) * Ev;
        for (int64_t j = 0; j < S; ++j) {
          const double* vr = v.data() + ((b * Hkv + h / group) * S + j) * Ev;
          for (int64_t e = 0; e < Ev; ++e) yr[e] += p[j] * vr[e];
        }
      }
  if (y_count == 0) return;
  dispatch<FloatTypes>(v_t.dtype(), kOp, [&](auto tag) {
    using T = decltype(tag);
    T* p = y_t.mutable_data<T>();
    for (int64_t i = 0; i < y_count; ++i) p[i] = to_elem<T>(y[i]);
  });
}

}  // namespace

void register_nn_flex_attention_kernels(sdk::KernelRegistry& r) {
  r.add("ai.onnx.preview", "FlexAttention", 1, LOOM_OPSET_OPEN_END, flex_attention);
}

}  // namespace loom::reference
