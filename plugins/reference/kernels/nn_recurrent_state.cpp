// Opset-27 ops that carry a recurrent state between calls:
// LinearAttention (linear / gated / delta / gated-delta recurrences) and
// CausalConvWithState (a depthwise causal 1-D convolution whose last k - 1
// inputs are the state). The state is computed in double and rounded once.
#include <algorithm>
#include <cmath>

#include "common/reduction_common.h"
#include "kernels/nn_internal.h"

namespace loom::reference {
namespace {

using sdk::KernelContext;

// Fills `out` (a floating-point tensor) from `values`, rounding once.
void write_doubles(const sdk::Tensor& out, const double* values, const std::string& op) {
  if (out.size() == 0) return;
  dispatch<FloatTypes>(out.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    T* p = out.mutable_data<T>();
    for (int64_t i = 0; i < out.size(); ++i) p[i] = to_elem<T>(values[i]);
  });
}

// LinearAttention: query [B, T, Hq * dk], key [B, T, Hkv * dk], value [B, T,
// Hkv * dv]; state S [B, Hkv, dk, dv] (past_state, else zeros). For each
// step t: S *= exp(decay_t) (gated rules; decay per head [.., Hkv] or per
// key dim [.., Hkv * dk]); v_t <- beta_t * (v_t - S^T k_t) (delta rules;
// beta [.., Hkv] or [.., 1]); S += k_t v_t^T; output_t = scale * q_t S, each
// q head reading kv head h / (Hq / Hkv). present_state is the final S, in
// past_state's type (else query's).
void linear_attention(KernelContext& ctx) {
  const std::string op = "LinearAttention";
  const sdk::Node node = ctx.node();
  const std::string rule = node.attr_string("update_rule", "gated_delta");
  if (rule != "linear" && rule != "gated" && rule != "delta" && rule != "gated_delta")
    sdk::fail_invalid(op + ": update_rule must be linear, gated, delta or gated_delta, got '" + rule + "'");
  const bool gating = rule == "gated" || rule == "gated_delta";
  const bool delta = rule == "delta" || rule == "gated_delta";
  const int64_t hq = node.attr_int("q_num_heads", 0), hkv = node.attr_int("kv_num_heads", 0);
  if (hq <= 0 || hkv <= 0 || hq % hkv != 0)
    sdk::fail_invalid(op + ": q_num_heads (" + std::to_string(hq) + ") must be a positive multiple of kv_num_heads (" +
                      std::to_string(hkv) + ")");
  const sdk::ConstTensor q_t = ctx.required_input(0), k_t = ctx.required_input(1), v_t = ctx.required_input(2);
  const Shape qs = q_t.shape(), ks = k_t.shape(), vs = v_t.shape();
  if (qs.size() != 3 || ks.size() != 3 || vs.size() != 3)
    sdk::fail_invalid(op + ": query, key and value must be 3-D [batch, sequence, heads * size]");
  const int64_t B = qs[0], T = qs[1];
  if (ks[0] != B || vs[0] != B || ks[1] != T || vs[1] != T)
    sdk::fail_invalid(op + ": query, key and value differ in batch or sequence length");
  if (qs[2] % hq != 0 || vs[2] % hkv != 0)
    sdk::fail_invalid(op + ": query's and value's last dims must be multiples of their head counts");
  const int64_t dk = qs[2] / hq, dv = vs[2] / hkv;
  if (ks[2] != hkv * dk)
    sdk::fail_invalid(op + ": key's last dim " + std::to_string(ks[2]) + " is not kv_num_heads x " + std::to_string(dk));
  const sdk::ConstTensor past = ctx.input(3), decay_t = ctx.input(4), beta_t = ctx.input(5);
  if (gating != decay_t.exists())
    sdk::fail_invalid(op + ": update_rule '" + rule + "' " + (gating ? "requires" : "forbids") + " the decay input");
  if (delta != beta_t.exists())
    sdk::fail_invalid(op + ": update_rule '" + rule + "' " + (delta ? "requires" : "forbids") + " the beta input");
  int64_t decay_width = 0, beta_width = 0;
  if (gating) {
    const Shape ds = decay_t.shape();
    if (ds.size() != 3 || ds[0] != B || ds[1] != T || (ds[2] != hkv && ds[2] != hkv * dk))
      sdk::fail_invalid(op + ": decay must be [batch, sequence, kv heads] or [.., kv heads x " + std::to_string(dk) +
                        "], got " + shape_string(ds));
    decay_width = ds[2];
  }
  if (delta) {
    const Shape bs = beta_t.shape();
    if (bs.size() != 3 || bs[0] != B || bs[1] != T || (bs[2] != hkv && bs[2] != 1))
      sdk::fail_invalid(op + ": beta must be [batch, sequence, kv heads or 1], got " + shape_string(bs));
    beta_width = bs[2];
  }
  const Shape state_shape = {B, hkv, dk, dv};
  const int64_t state_count = sdk::checked_element_count(state_shape, op + ": state size");
  if (past.exists() && past.shape() != state_shape)
    sdk::fail_invalid(op + ": past_state must be " + shape_string(state_shape) + ", got " + shape_string(past.shape()));
  // The output, then the state, within the run's limits (dk x dv can be
  // far larger than any input).
  const Shape out_shape = {B, T, sdk::checked_mul(hq, dv, op + ": output width")};
  sdk::Tensor y_t = ctx.output(0, out_shape, q_t.dtype());
  double* state = ctx.scratch<double>(state_count, op + ": state");
  if (past.exists()) {
    const std::vector<double> p = float_tensor_to_doubles(past, op);
    std::copy(p.begin(), p.end(), state);
  } else {
    std::fill(state, state + state_count, 0.0);
  }
  const auto scale_attr = node.find_float("scale");
  const double scale = scale_attr && *scale_attr != 0.0f ? *scale_attr : 1.0 / std::sqrt(static_cast<double>(dk));
  const std::vector<double> q = float_tensor_to_doubles(q_t, op), k = float_tensor_to_doubles(k_t, op),
                            v = float_tensor_to_doubles(v_t, op);
  const std::vector<double> decay = gating ? float_tensor_to_doubles(decay_t, op) : std::vector<double>();
  const std::vector<double> beta = delta ? float_tensor_to_doubles(beta_t, op) : std::vector<double>();
  const int64_t out_count = sdk::checked_element_count(out_shape, op + ": output size");
  double* out = ctx.scratch<double>(out_count, op + ": output");
  std::vector<double> vt(static_cast<size_t>(dv));
  const int64_t group = hq / hkv;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t) {
      for (int64_t h = 0; h < hkv; ++h) {
        double* s = state + (b * hkv + h) * dk * dv;
        const double* kk = k.data() + (b * T + t) * hkv * dk + h * dk;
        const double* vv = v.data() + (b * T + t) * hkv * dv + h * dv;
        if (gating)
          for (int64_t d = 0; d < dk; ++d) {
            const double g = decay[static_cast<size_t>((b * T + t) * decay_width + (decay_width == hkv ? h : h * dk + d))];
            for (int64_t m = 0; m < dv; ++m) s[d * dv + m] *= std::exp(g);
          }
        for (int64_t m = 0; m < dv; ++m) vt[static_cast<size_t>(m)] = vv[m];
        if (delta) {
          const double bt = beta[static_cast<size_t>((b * T + t) * beta_width + (beta_width == 1 ? 0 : h))];
          for (int64_t m = 0; m < dv; ++m) {
            double retrieved = 0;
            for (int64_t d = 0; d < dk; ++d) retrieved += s[d * dv + m] * kk[d];
            vt[static_cast<size_t>(m)] = bt * (vv[m] - retrieved);
          }
        }
        for (int64_t d = 0; d < dk; ++d)
          for (int64_t m = 0; m < dv; ++m) s[d * dv + m] += kk[d] * vt[static_cast<size_t>(m)];
      }
      for (int64_t h = 0; h < hq; ++h) {
        const double* s = state + (b * hkv + h / group) * dk * dv;
        const double* qq = q.data() + (b * T + t) * hq * dk + h * dk;
        double* o = out + (b * T + t) * hq * dv + h * dv;
        for (int64_t m = 0; m < dv; ++m) {
          double acc = 0;
          for (int64_t d = 0; d < dk; ++d) acc += qq[d] * s[d * dv + m];
          o[m] = scale * acc;
        }
      }
    }
  write_doubles(y_t, out, op);
  if (wants_output(ctx, 1)) write_doubles(ctx.output(1, state_shape, past.exists() ? past.dtype() : q_t.dtype()), state, op);
}

// CausalConvWithState: input [B, C, L] left-padded with past_state [B, C,
// k - 1] (zeros when absent), convolved per channel with weight [C, 1, k]
// (+ bias [C]); activation "silu"/"swish" applies x * sigmoid(x) to the
// result rounded to the element type. present_state is the last k - 1
// columns of the padded input.
void causal_conv_with_state(KernelContext& ctx) {
  const std::string op = "CausalConvWithState";
  const std::string activation = ctx.node().attr_string("activation", "none");
  if (activation != "none" && activation != "silu" && activation != "swish")
    sdk::fail_invalid(op + ": activation must be none, silu or swish, got '" + activation + "'");
  const sdk::ConstTensor x_t = ctx.required_input(0), w_t = ctx.required_input(1);
  const Shape xs = x_t.shape(), ws = w_t.shape();
  if (xs.size() != 3) sdk::fail_invalid(op + ": input must be [batch, channels, length], got " + shape_string(xs));
  const int64_t B = xs[0], C = xs[1], L = xs[2];
  if (ws.size() != 3 || ws[0] != C || ws[1] != 1 || ws[2] < 1)
    sdk::fail_invalid(op + ": weight must be [" + std::to_string(C) + ", 1, k >= 1], got " + shape_string(ws));
  const int64_t K = ws[2], P = K - 1;
  const sdk::ConstTensor bias_t = ctx.input(2), past = ctx.input(3);
  if (bias_t.exists() && bias_t.shape() != Shape{C})
    sdk::fail_invalid(op + ": bias must be [" + std::to_string(C) + "], got " + shape_string(bias_t.shape()));
  if (past.exists() && past.shape() != Shape{B, C, P})
    sdk::fail_invalid(op + ": past_state must be " + shape_string({B, C, P}) + ", got " + shape_string(past.shape()));
  const int64_t width = sdk::checked_add(L, P, op + ": padded length");
  sdk::checked_element_count({B, C, width}, op + ": padded size");
  const std::vector<double> x = float_tensor_to_doubles(x_t, op), w = float_tensor_to_doubles(w_t, op);
  const std::vector<double> bias = bias_t.exists() ? float_tensor_to_doubles(bias_t, op) : std::vector<double>(static_cast<size_t>(C), 0.0);
  const std::vector<double> pv = past.exists() ? float_tensor_to_doubles(past, op) : std::vector<double>();
  std::vector<double> padded(static_cast<size_t>(B * C * width), 0.0), out(static_cast<size_t>(B * C * L));
  for (int64_t bc = 0; bc < B * C; ++bc) {
    double* row = padded.data() + bc * width;
    for (int64_t j = 0; j < P && !pv.empty(); ++j) row[j] = pv[static_cast<size_t>(bc * P + j)];
    for (int64_t j = 0; j < L; ++j) row[P + j] = x[static_cast<size_t>(bc * L + j)];
    const int64_t c = bc % C;
    for (int64_t j = 0; j < L; ++j) {
      double acc = bias[static_cast<size_t>(c)];
      for (int64_t i = 0; i < K; ++i) acc += w[static_cast<size_t>(c * K + i)] * row[j + i];
      out[static_cast<size_t>(bc * L + j)] = acc;
    }
  }
  const int32_t dtype = x_t.dtype();
  if (activation != "none") {
    dispatch<FloatTypes>(dtype, op, [&](auto tag) {
      using T = decltype(tag);
      for (double& y : out) {
        const double r = static_cast<double>(to_elem<T>(y));  // the reference rounds before the activation
        y = r / (1.0 + std::exp(-r));
      }
    });
  }
  write_float_output(ctx, 0, xs, dtype, out, op);
  if (wants_output(ctx, 1)) {
    std::vector<double> state(static_cast<size_t>(B * C * P));
    for (int64_t bc = 0; bc < B * C; ++bc)
      for (int64_t j = 0; j < P; ++j) state[static_cast<size_t>(bc * P + j)] = padded[static_cast<size_t>(bc * width + L + j)];
    write_float_output(ctx, 1, {B, C, P}, dtype, state, op);
  }
}

}  // namespace

void register_nn_recurrent_state_kernels(sdk::KernelRegistry& r) {
  r.add("", "LinearAttention", 27, LOOM_OPSET_OPEN_END, linear_attention);
  r.add("", "CausalConvWithState", 27, LOOM_OPSET_OPEN_END, causal_conv_with_state);
}

}  // namespace loom::reference
