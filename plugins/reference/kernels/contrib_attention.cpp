// com.microsoft Attention (ONNX Runtime CPU semantics): multi-head self
// attention with the Q/K/V projection fused in.
//   QKV = input [B, S, D_in] x weights [D_in, D + D + D_v] + bias
//   scores[b, n, s, t] = scale * Q.K + mask[b, s, t] + attention_bias[b, n, s, t]
//   output[b, s, n * H_v + h] = softmax_t(scores) . V
// with past [2, B, N, P, H] prepended to K and V (T = P + S) and present
// [2, B, N, T, H] = the concatenation. The mask follows ORT's PrepareMask:
// masked positions get mask_filter_value (they are replaced, not added to),
// and unidirectional (causal) positions get the lowest float.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "common/dispatch.h"
#include "common/reduction_common.h"
#include "common/shape.h"
#include "kernels/contrib_internal.h"
#include "kernels/nn_internal.h"

namespace loom::reference {
namespace {

using sdk::ConstTensor;
using sdk::KernelContext;

const std::string kOp = "Attention";

[[noreturn]] void not_implemented(const std::string& what) {
  throw sdk::Error(kOp + ": " + what + " is not implemented", LOOM_STATUS_NOT_IMPLEMENTED);
}

class AttentionKernel {
 public:
  explicit AttentionKernel(const sdk::Node& node) {
    num_heads_ = node.required_int("num_heads");
    if (num_heads_ <= 0) sdk::fail_invalid(kOp + ": num_heads must be positive, got " + std::to_string(num_heads_));
    unidirectional_ = node.attr_int("unidirectional", 0) != 0;
    qkv_hidden_sizes_ = node.attr_ints("qkv_hidden_sizes");
    mask_filter_value_ = node.attr_float("mask_filter_value", -10000.0f);
    scale_ = node.attr_float("scale", 0.0f);
    if (node.attr_int("do_rotary", 0) != 0) not_implemented("do_rotary=1 (rotary embeddings)");
    if (node.attr_int("past_present_share_buffer", 0) != 0) not_implemented("past_present_share_buffer=1");
  }

  void compute(KernelContext& ctx) const {
    const ConstTensor input = ctx.required_input(0), weights = ctx.required_input(1);
    const ConstTensor bias = ctx.input(2), mask = ctx.input(3), past = ctx.input(4), attn_bias = ctx.input(5);
    dispatch<TypeList<float>>(input.dtype(), kOp, [](auto) {});
    if (weights.dtype() != input.dtype() || (bias.exists() && bias.dtype() != input.dtype()))
      sdk::fail_invalid(kOp + ": weights and bias must have the input's element type");
    if (input.rank() != 3)
      sdk::fail_invalid(kOp + ": input must be 3-D [batch, sequence, hidden], got " + shape_string(input.shape()));
    const int64_t B = input.dim(0), S = input.dim(1), Din = input.dim(2), N = num_heads_;
    if (weights.rank() != 2 || weights.dim(0) != Din)
      sdk::fail_invalid(kOp + ": weights must be 2-D [" + std::to_string(Din) + ", D + D + D_v], got " +
                        shape_string(weights.shape()));
    const int64_t W = weights.dim(1);
    int64_t Dq = W / 3, Dk = Dq, Dv = Dq;
    if (!qkv_hidden_sizes_.empty()) {
      if (qkv_hidden_sizes_.size() != 3)
        sdk::fail_invalid(kOp + ": qkv_hidden_sizes must have 3 elements, got " + std::to_string(qkv_hidden_sizes_.size()));
      Dq = qkv_hidden_sizes_[0];
      Dk = qkv_hidden_sizes_[1];
      Dv = qkv_hidden_sizes_[2];
      if (Dq != Dk) sdk::fail_invalid(kOp + ": qkv_hidden_sizes Q and K sizes differ (" + std::to_string(Dq) + " vs " + std::to_string(Dk) + ")");
    } else if (W % 3 != 0) {
      sdk::fail_invalid(kOp + ": weights dimension 1 (" + std::to_string(W) + ") is not divisible by 3");
    }
    if (Dq + Dk + Dv != W)
      sdk::fail_invalid(kOp + ": weights dimension 1 (" + std::to_string(W) + ") differs from the sum of Q/K/V hidden sizes (" +
                        std::to_string(Dq + Dk + Dv) + ")");
    if (Dq <= 0 || Dv <= 0 || Dq % N != 0 || Dv % N != 0)
      sdk::fail_invalid(kOp + ": hidden sizes " + std::to_string(Dq) + " / " + std::to_string(Dv) +
                        " must be positive and divisible by num_heads " + std::to_string(N));
    if (bias.exists() && (bias.rank() != 1 || bias.dim(0) != W))
      sdk::fail_invalid(kOp + ": bias must be 1-D [" + std::to_string(W) + "], got " + shape_string(bias.shape()));
    const int64_t H = Dq / N, Hv = Dv / N;

    int64_t P = 0;
    if (past.exists()) {
      const Shape ps = past.shape();
      if (Dk != Dv) sdk::fail_invalid(kOp + ": past requires equal K and V hidden sizes");
      if (ps.size() != 5 || ps[0] != 2 || ps[1] != B || ps[2] != N || ps[4] != H)
        sdk::fail_invalid(kOp + ": past must have shape [2, " + std::to_string(B) + ", " + std::to_string(N) + ", P, " +
                          std::to_string(H) + "], got " + shape_string(ps));
      if (past.dtype() != input.dtype()) sdk::fail_invalid(kOp + ": past must have the input's element type");
      P = ps[3];
    }
    const int64_t T = P + S;

    // Attention bias (relative position bias): [B or 1, N or 1, S, T].
    int64_t ab_b = 0, ab_n = 0;
    if (attn_bias.exists()) {
      const Shape as = attn_bias.shape();
      if (as.size() != 4 || (as[0] != B && as[0] != 1) || (as[1] != N && as[1] != 1) || as[2] != S || as[3] != T)
        sdk::fail_invalid(kOp + ": attention_bias must have shape [" + std::to_string(B) + " or 1, " + std::to_string(N) +
                          " or 1, " + std::to_string(S) + ", " + std::to_string(T) + "], got " + shape_string(as));
      if (attn_bias.dtype() != input.dtype()) sdk::fail_invalid(kOp + ": attention_bias must have the input's element type");
      ab_b = as[0];
      ab_n = as[1];
    }

    const std::vector<double> mask_add = build_mask(mask, B, S, P);

    // QKV projection.
    const std::vector<double> x = float_tensor_to_doubles(input, kOp), w = float_tensor_to_doubles(weights, kOp);
    std::vector<double> qkv(static_cast<size_t>(B * S * W));
    if (!qkv.empty() && Din > 0)
      nn_gemm<double>(false, false, B * S, W, Din, 1.0, x.data(), Din, w.data(), W, 0.0, qkv.data(), W);
    if (bias.exists()) {
      const std::vector<double> bv = float_tensor_to_doubles(bias, kOp);
      for (size_t i = 0; i < qkv.size(); ++i) qkv[i] += bv[i % static_cast<size_t>(W)];
    }
    // K and V with past: [B, N, T, H] / [B, N, T, Hv].
    std::vector<double> k(static_cast<size_t>(B * N * T * H)), v(static_cast<size_t>(B * N * T * Hv));
    const std::vector<double> pv = past.exists() ? float_tensor_to_doubles(past, kOp) : std::vector<double>();
    for (int64_t b = 0; b < B; ++b)
      for (int64_t n = 0; n < N; ++n) {
        for (int64_t t = 0; t < P; ++t)
          for (int64_t h = 0; h < H; ++h) {
            const int64_t src = ((b * N + n) * P + t) * H + h;
            k[static_cast<size_t>(((b * N + n) * T + t) * H + h)] = pv[static_cast<size_t>(src)];
            v[static_cast<size_t>(((b * N + n) * T + t) * Hv + h)] = pv[static_cast<size_t>(B * N * P * H + src)];
          }
        for (int64_t s = 0; s < S; ++s) {
          const double* row = qkv.data() + (b * S + s) * W;
          for (int64_t h = 0; h < H; ++h) k[static_cast<size_t>(((b * N + n) * T + P + s) * H + h)] = row[Dq + n * H + h];
          for (int64_t h = 0; h < Hv; ++h)
            v[static_cast<size_t>(((b * N + n) * T + P + s) * Hv + h)] = row[Dq + Dk + n * Hv + h];
        }
      }

    const double scale = scale_ == 0.0f ? 1.0 / std::sqrt(static_cast<double>(H)) : static_cast<double>(scale_);
    const std::vector<double> ab = attn_bias.exists() ? float_tensor_to_doubles(attn_bias, kOp) : std::vector<double>();
    std::vector<double> out(static_cast<size_t>(B * S * Dv), 0.0), scores(static_cast<size_t>(T));
    for (int64_t b = 0; b < B; ++b)
      for (int64_t n = 0; n < N; ++n)
        for (int64_t s = 0; s < S; ++s) {
          const double* q = qkv.data() + (b * S + s) * W + n * H;
          double mx = -std::numeric_limits<double>::infinity();
          for (int64_t t = 0; t < T; ++t) {
            const double* kr = k.data() + ((b * N + n) * T + t) * H;
            double dot = 0;
            for (int64_t h = 0; h < H; ++h) dot += q[h] * kr[h];
            double sc = scale * dot;
            if (!mask_add.empty()) sc += mask_add[static_cast<size_t>((b * S + s) * T + t)];
            if (!ab.empty())
              sc += ab[static_cast<size_t>((((ab_b == 1 ? 0 : b) * ab_n + (ab_n == 1 ? 0 : n)) * S + s) * T + t)];
            // ORT adds the mask into the float GEMM result; rounding to float here
            // reproduces its precision when a large mask_filter_value dominates.
            scores[static_cast<size_t>(t)] = static_cast<double>(static_cast<float>(sc));
            mx = std::max(mx, sc);
          }
          double total = 0;
          for (int64_t t = 0; t < T; ++t) {
            double& e = scores[static_cast<size_t>(t)];
            e = std::exp(e - mx);
            total += e;
          }
          double* o = out.data() + (b * S + s) * Dv + n * Hv;
          for (int64_t t = 0; t < T; ++t) {
            const double p = scores[static_cast<size_t>(t)] / total;
            const double* vr = v.data() + ((b * N + n) * T + t) * Hv;
            for (int64_t h = 0; h < Hv; ++h) o[h] += p * vr[h];
          }
        }
    write_float_output(ctx, 0, {B, S, Dv}, input.dtype(), out, kOp);
    if (wants_output(ctx, 1)) {
      if (Dk != Dv) sdk::fail_invalid(kOp + ": present requires equal K and V hidden sizes");
      std::vector<double> present(k);
      present.insert(present.end(), v.begin(), v.end());
      write_float_output(ctx, 1, {2, B, N, T, H}, input.dtype(), present, kOp);
    }
  }

 private:
  // ORT's PrepareMask: the value added to each score, [B, S, T] (empty: none).
  std::vector<double> build_mask(const ConstTensor& mask, int64_t B, int64_t S, int64_t P) const {
    const int64_t T = P + S;
    const bool has_mask = mask.exists();
    std::vector<int64_t> m;
    Shape ms;
    if (has_mask) {
      if (mask.dtype() != LOOM_DTYPE_INT32)
        sdk::fail_invalid(kOp + ": mask_index must be int32, got " + sdk::dtype_name(mask.dtype()));
      ms = mask.shape();
      m = mask.to_int64_vector();
    }
    enum Kind { kNone, kEnd, kEndStart, kRaw2D, k3D } kind = kNone;
    if (has_mask) {
      if (ms.size() == 1) {
        if (ms[0] == B) kind = kEnd;
        else if (ms[0] == 2 * B) kind = kEndStart;
        else sdk::fail_invalid(kOp + ": 1-D mask_index must have length batch_size (" + std::to_string(B) +
                               ") or 2 * batch_size, got " + shape_string(ms));
      } else if (ms.size() == 2) {
        if (ms[0] == B && ms[1] == T) kind = kRaw2D;
        else if ((ms[0] == B || ms[0] == 1) && ms[1] == 1) kind = kNone;  // dummy mask: same as none
        else sdk::fail_invalid(kOp + ": 2-D mask_index must have shape [batch_size, total_sequence_length] = [" +
                               std::to_string(B) + ", " + std::to_string(T) + "], got " + shape_string(ms));
      } else if (ms.size() == 3) {
        if (ms[0] != B || ms[1] != S || ms[2] != T)
          sdk::fail_invalid(kOp + ": 3-D mask_index must have shape [batch_size, sequence_length, total_sequence_length] = [" +
                            std::to_string(B) + ", " + std::to_string(S) + ", " + std::to_string(T) + "], got " +
                            shape_string(ms));
        kind = k3D;
      } else if (ms.size() == 4) {
        not_implemented("4-D (Megatron) mask_index " + shape_string(ms));
      } else {
        sdk::fail_invalid(kOp + ": mask_index must have 1, 2, 3 or 4 dimensions, got " + shape_string(ms));
      }
    }
    if (kind == kNone && !unidirectional_) return {};
    const double filter = static_cast<double>(mask_filter_value_);
    std::vector<double> out(static_cast<size_t>(B * S * T), 0.0);
    for (int64_t b = 0; b < B; ++b) {
      std::vector<double> row(static_cast<size_t>(T), 0.0);  // per-key mask shared by every query (1-D, 2-D)
      if (kind == kEnd || kind == kEndStart) {
        const int64_t end = std::clamp<int64_t>(m[static_cast<size_t>(b)], 0, T);
        for (int64_t t = end; t < T; ++t) row[static_cast<size_t>(t)] = filter;
        if (kind == kEndStart) {
          const int64_t start = std::clamp<int64_t>(m[static_cast<size_t>(B + b)], 0, T);
          for (int64_t t = 0; t < start; ++t) row[static_cast<size_t>(t)] = filter;
        }
      } else if (kind == kRaw2D) {
        for (int64_t t = 0; t < T; ++t) row[static_cast<size_t>(t)] = m[static_cast<size_t>(b * T + t)] > 0 ? 0.0 : filter;
      }
      for (int64_t s = 0; s < S; ++s)
        for (int64_t t = 0; t < T; ++t) {
          double& o = out[static_cast<size_t>((b * S + s) * T + t)];
          o = kind == k3D ? (m[static_cast<size_t>((b * S + s) * T + t)] > 0 ? 0.0 : filter) : row[static_cast<size_t>(t)];
          if (unidirectional_ && t > P + s) o = static_cast<double>(std::numeric_limits<float>::lowest());
        }
    }
    return out;
  }

  int64_t num_heads_ = 0;
  bool unidirectional_ = false;
  std::vector<int64_t> qkv_hidden_sizes_;
  float mask_filter_value_ = -10000.0f;
  float scale_ = 0.0f;
};

}  // namespace

void register_contrib_attention_kernels(sdk::KernelRegistry& r) {
  r.add_class<AttentionKernel>(kMsDomain, "Attention", 1, LOOM_OPSET_OPEN_END, {{"T", {LOOM_DTYPE_FLOAT}}});
}

}  // namespace loom::reference
