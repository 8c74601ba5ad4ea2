// Normalisations from ONNX Runtime's contrib ops, with ORT's CPU semantics:
//   com.microsoft SkipLayerNormalization / SkipSimplifiedLayerNormalization:
//     s = input + skip (+ bias); y = LayerNorm / RMSNorm of s over the last dim.
//   com.microsoft EmbedLayerNormalization: word + position (+ segment)
//     embeddings, LayerNorm, and a mask_index (count of mask == 1 per batch).
//   "" SimplifiedLayerNormalization (ORT registers it in the ONNX domain):
//     RMS normalisation over dims [axis, rank).
// Statistics are computed in double and rounded once.
#include <cmath>
#include <string>
#include <vector>

#include "common/dispatch.h"
#include "common/reduction_common.h"
#include "common/shape.h"
#include "kernels/contrib_internal.h"

namespace loom::reference {
namespace {

using sdk::ConstTensor;
using sdk::KernelContext;

// A 1-D parameter of `n` elements, as doubles.
std::vector<double> hidden_param(const ConstTensor& t, int64_t n, const std::string& op, const char* what) {
  if (t.rank() != 1 || t.dim(0) != n)
    sdk::fail_invalid(op + ": " + what + " must be 1-D of size " + std::to_string(n) + " (the hidden size), got " +
                      shape_string(t.shape()));
  return float_tensor_to_doubles(t, op);
}

// Mean and 1/sqrt(var + eps) (or 1/sqrt(mean(x^2) + eps) when simplified) of
// `n` values, then y = (x - mean) * inv * gamma + beta (mean = 0 and no beta
// when simplified).
void normalize_row(const double* x, int64_t n, double eps, bool simplified, const std::vector<double>& gamma,
                   const std::vector<double>* beta, double* y, double& mean_out, double& inv_out) {
  double mean = 0;
  if (!simplified) {
    for (int64_t i = 0; i < n; ++i) mean += x[i];
    mean /= static_cast<double>(n);
  }
  double sq = 0;
  for (int64_t i = 0; i < n; ++i) sq += (x[i] - mean) * (x[i] - mean);
  const double inv = 1.0 / std::sqrt(sq / static_cast<double>(n) + eps);
  for (int64_t i = 0; i < n; ++i) {
    const size_t k = static_cast<size_t>(i);
    y[i] = (x[i] - mean) * inv * gamma[k] + (beta != nullptr ? (*beta)[k] : 0.0);
  }
  mean_out = mean;
  inv_out = inv;
}

// Writes `values` (doubles) to output `index` with `dims` and the element type of `like`.
void write_output(KernelContext& ctx, size_t index, const Shape& dims, int32_t dtype, const std::vector<double>& v,
                  const std::string& op) {
  write_float_output(ctx, index, dims, dtype, v, op);
}

// SkipLayerNormalization (simplified = false) and
// SkipSimplifiedLayerNormalization (simplified = true), com.microsoft 1.
// Inputs: input [..., H], skip (input's shape, or its trailing dims with
// leading 1s, e.g. [1, S, H] or [S, H] for a [B, S, H] input), gamma [H],
// beta [H] (LayerNorm only, optional), bias [H] (optional).
// Outputs: output, mean and inv_std_var ([..., 1], optional), input_skip_bias_sum (optional).
template <bool simplified>
void skip_layer_norm(KernelContext& ctx) {
  const std::string op = simplified ? "SkipSimplifiedLayerNormalization" : "SkipLayerNormalization";
  const ConstTensor x = ctx.required_input(0), skip = ctx.required_input(1);
  const Shape in = x.shape(), ss = skip.shape();
  if (in.empty()) sdk::fail_invalid(op + ": input must have rank >= 1");
  const int64_t hidden = in.back();
  if (skip.dtype() != x.dtype()) sdk::fail_invalid(op + ": skip element type differs from the input's");
  // skip: the input's shape, or its trailing dims after leading 1s (the
  // kernel reads skip[i % skip_size], as ORT does).
  size_t lead = 0;
  while (lead + 1 < ss.size() && ss[lead] == 1) ++lead;
  bool skip_ok = !ss.empty() && ss.size() <= in.size();
  for (size_t i = 0; skip_ok && i < ss.size() - lead; ++i) skip_ok = ss[ss.size() - 1 - i] == in[in.size() - 1 - i];
  if (!skip_ok || ss.back() != hidden)
    sdk::fail_invalid(op + ": skip of shape " + shape_string(ss) + " must match input " + shape_string(in) +
                      " or its trailing dims (e.g. [1, S, H] or [S, H])");
  const std::vector<double> gamma = hidden_param(ctx.required_input(2), hidden, op, "gamma");
  std::vector<double> beta, bias;
  const size_t bias_index = simplified ? 3 : 4;
  if (!simplified && ctx.input(3).exists()) beta = hidden_param(ctx.input(3), hidden, op, "beta");
  if (ctx.input(bias_index).exists()) bias = hidden_param(ctx.input(bias_index), hidden, op, "bias");
  const double eps = ctx.node().attr_float("epsilon", 1e-12f);

  const int64_t total = element_count(in);
  const int64_t rows = hidden == 0 ? 0 : total / hidden;
  const int64_t skip_size = element_count(ss);
  std::vector<double> px = float_tensor_to_doubles(x, op), pskip = float_tensor_to_doubles(skip, op);
  std::vector<double> sum(static_cast<size_t>(total)), y(static_cast<size_t>(total));
  std::vector<double> means(static_cast<size_t>(rows)), invs(static_cast<size_t>(rows));
  for (int64_t i = 0; i < total; ++i) {
    double v = px[static_cast<size_t>(i)] + pskip[static_cast<size_t>(i % skip_size)];
    if (!bias.empty()) v += bias[static_cast<size_t>(i % hidden)];
    sum[static_cast<size_t>(i)] = v;
  }
  for (int64_t r = 0; r < rows; ++r)
    normalize_row(sum.data() + r * hidden, hidden, eps, simplified, gamma, beta.empty() ? nullptr : &beta,
                  y.data() + r * hidden, means[static_cast<size_t>(r)], invs[static_cast<size_t>(r)]);
  Shape stat_shape = in;
  stat_shape.back() = 1;
  dispatch<TypeList<float, double>>(x.dtype(), op, [](auto) {});
  write_output(ctx, 0, in, x.dtype(), y, op);
  if (wants_output(ctx, 1)) write_output(ctx, 1, stat_shape, LOOM_DTYPE_FLOAT, means, op);
  if (wants_output(ctx, 2)) write_output(ctx, 2, stat_shape, LOOM_DTYPE_FLOAT, invs, op);
  if (wants_output(ctx, 3)) write_output(ctx, 3, in, x.dtype(), sum, op);
}

// SimplifiedLayerNormalization ("" domain, ORT contrib): RMS norm over
// [axis, rank) with Scale broadcast over those dims; optional output 1 is
// inv_std_var with shape dims[:axis] + [1] * (rank - axis).
void simplified_layer_norm(KernelContext& ctx) {
  const std::string op = "SimplifiedLayerNormalization";
  const ConstTensor x = ctx.required_input(0), scale_t = ctx.required_input(1);
  const Shape in = x.shape();
  const int64_t rank = static_cast<int64_t>(in.size());
  if (rank == 0) sdk::fail_invalid(op + ": input must have rank >= 1");
  const int64_t axis = normalize_axis(ctx.node().attr_int("axis", -1), rank, op);
  const double eps = ctx.node().attr_float("epsilon", 1e-5f);
  const Shape norm_shape(in.begin() + axis, in.end());
  const int64_t rows = dims_product(in, 0, static_cast<size_t>(axis));
  const int64_t cols = element_count(norm_shape);
  if (element_count(scale_t.shape()) != cols || scale_t.rank() > norm_shape.size())
    sdk::fail_invalid(op + ": scale of shape " + shape_string(scale_t.shape()) + " does not match the normalized dims " +
                      shape_string(norm_shape));
  dispatch<TypeList<float, double>>(x.dtype(), op, [](auto) {});
  const std::vector<double> scale = float_tensor_to_doubles(scale_t, op);
  const std::vector<double> px = float_tensor_to_doubles(x, op);
  std::vector<double> y(px.size()), invs(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    double mean_unused = 0;
    normalize_row(px.data() + r * cols, cols, eps, true, scale, nullptr, y.data() + r * cols, mean_unused,
                  invs[static_cast<size_t>(r)]);
  }
  write_output(ctx, 0, in, x.dtype(), y, op);
  if (wants_output(ctx, 1)) {
    Shape stat_shape(in.begin(), in.begin() + axis);
    stat_shape.resize(in.size(), 1);
    const int32_t stash = static_cast<int32_t>(ctx.node().attr_int("stash_type", LOOM_DTYPE_FLOAT));
    write_output(ctx, 1, stat_shape, stash, invs, op);
  }
}

// The int32 ids of an [B, S]-shaped input, checked for type.
std::vector<int64_t> int32_ids(const ConstTensor& t, const std::string& op, const char* what) {
  if (t.dtype() != LOOM_DTYPE_INT32)
    sdk::fail_invalid(op + ": " + what + " must be int32, got " + sdk::dtype_name(t.dtype()));
  return t.to_int64_vector();
}

// A 2-D embedding table [rows, hidden].
void check_table(const ConstTensor& t, int64_t hidden, const std::string& op, const char* what) {
  if (t.rank() != 2 || (hidden >= 0 && t.dim(1) != hidden))
    sdk::fail_invalid(op + ": " + what + " must be 2-D [rows, " + std::to_string(hidden) + "], got " +
                      shape_string(t.shape()));
}

// EmbedLayerNormalization (com.microsoft 1). Inputs: input_ids [B, S],
// segment_ids? [B, S], word_embedding [V, H], position_embedding [P, H],
// segment_embedding? [G, H], gamma [H], beta [H], mask? [B, S],
// position_ids? [B, S] or [1, S] (default: position s). Outputs: output
// [B, S, H], mask_index int32 [B] (count of mask values equal to 1; zeros
// without a mask, as ORT), embedding_sum? [B, S, H] (before normalisation).
void embed_layer_norm(KernelContext& ctx) {
  const std::string op = "EmbedLayerNormalization";
  const ConstTensor ids_t = ctx.required_input(0);
  const ConstTensor seg_ids_t = ctx.input(1);
  const ConstTensor word_t = ctx.required_input(2), pos_t = ctx.required_input(3);
  const ConstTensor seg_t = ctx.input(4);
  const ConstTensor mask_t = ctx.input(7), pos_ids_t = ctx.input(8);
  if (ids_t.rank() != 2) sdk::fail_invalid(op + ": input_ids must be 2-D [batch, sequence], got " + shape_string(ids_t.shape()));
  const Shape ids_shape = ids_t.shape();
  const int64_t B = ids_shape[0], S = ids_shape[1];
  check_table(word_t, -1, op, "word_embedding");
  const int64_t H = word_t.dim(1);
  check_table(pos_t, H, op, "position_embedding");
  if (seg_ids_t.exists() != seg_t.exists())
    sdk::fail_invalid(op + ": segment_ids and segment_embedding must be given together");
  if (seg_t.exists()) check_table(seg_t, H, op, "segment_embedding");
  if (seg_ids_t.exists() && seg_ids_t.shape() != ids_shape)
    sdk::fail_invalid(op + ": segment_ids shape " + shape_string(seg_ids_t.shape()) + " differs from input_ids " +
                      shape_string(ids_shape));
  if (mask_t.exists() && mask_t.shape() != ids_shape)
    sdk::fail_invalid(op + ": mask shape " + shape_string(mask_t.shape()) + " differs from input_ids " +
                      shape_string(ids_shape));
  bool broadcast_pos = false;
  if (pos_ids_t.exists()) {
    const Shape ps = pos_ids_t.shape();
    if (ps.size() != 2 || ps[1] != S || (ps[0] != B && ps[0] != 1))
      sdk::fail_invalid(op + ": position_ids must have shape [batch_size, sequence_length] or [1, sequence_length] "
                        "with batch_size " + std::to_string(B) + " and sequence_length " + std::to_string(S) +
                        ", got " + shape_string(ps));
    broadcast_pos = ps[0] == 1 && B != 1;
  }
  const std::vector<double> gamma = hidden_param(ctx.required_input(5), H, op, "gamma");
  const std::vector<double> beta = hidden_param(ctx.required_input(6), H, op, "beta");
  const double eps = ctx.node().attr_float("epsilon", 1e-12f);
  const int32_t dtype = word_t.dtype();
  dispatch<TypeList<float, double>>(dtype, op, [](auto) {});
  if (pos_t.dtype() != dtype || (seg_t.exists() && seg_t.dtype() != dtype))
    sdk::fail_invalid(op + ": embedding tables must have the same element type");

  const std::vector<int64_t> ids = int32_ids(ids_t, op, "input_ids");
  const std::vector<int64_t> seg_ids = seg_ids_t.exists() ? int32_ids(seg_ids_t, op, "segment_ids") : std::vector<int64_t>();
  const std::vector<int64_t> pos_ids = pos_ids_t.exists() ? int32_ids(pos_ids_t, op, "position_ids") : std::vector<int64_t>();
  const std::vector<double> word = float_tensor_to_doubles(word_t, op), pos = float_tensor_to_doubles(pos_t, op);
  const std::vector<double> seg = seg_t.exists() ? float_tensor_to_doubles(seg_t, op) : std::vector<double>();
  const int64_t V = word_t.dim(0), P = pos_t.dim(0), G = seg_t.exists() ? seg_t.dim(0) : 0;

  auto check_index = [&](int64_t v, int64_t limit, const char* what, int64_t b, int64_t s) {
    if (v < 0 || v >= limit)
      sdk::fail_invalid(op + ": " + what + " " + std::to_string(v) + " at [" + std::to_string(b) + ", " +
                        std::to_string(s) + "] out of range [0, " + std::to_string(limit) + ")");
  };
  const size_t n = static_cast<size_t>(B * S * H);
  std::vector<double> sum(n), y(n);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s) {
      const int64_t idx = b * S + s;
      const int64_t w = ids[static_cast<size_t>(idx)];
      check_index(w, V, "input_ids value", b, s);
      const int64_t p = pos_ids.empty() ? s : pos_ids[static_cast<size_t>(broadcast_pos ? s : idx)];
      check_index(p, P, pos_ids.empty() ? "position" : "position_ids value", b, s);
      int64_t g = -1;
      if (!seg.empty() || seg_t.exists()) {
        g = seg_ids[static_cast<size_t>(idx)];
        check_index(g, G, "segment_ids value", b, s);
      }
      double* row = sum.data() + idx * H;
      for (int64_t h = 0; h < H; ++h) {
        double v = word[static_cast<size_t>(w * H + h)] + pos[static_cast<size_t>(p * H + h)];
        if (g >= 0) v += seg[static_cast<size_t>(g * H + h)];
        row[h] = v;
      }
      double m = 0, inv = 0;
      normalize_row(row, H, eps, false, gamma, &beta, y.data() + idx * H, m, inv);
    }
  write_output(ctx, 0, {B, S, H}, dtype, y, op);
  if (wants_output(ctx, 1)) {
    sdk::Tensor mi = ctx.output(1, {B}, LOOM_DTYPE_INT32);
    if (B > 0) {
      int32_t* pm = mi.mutable_data<int32_t>();
      const std::vector<int64_t> mask = mask_t.exists() ? int32_ids(mask_t, op, "mask") : std::vector<int64_t>();
      for (int64_t b = 0; b < B; ++b) {
        int32_t count = 0;
        if (!mask.empty())
          for (int64_t s = 0; s < S; ++s) count += mask[static_cast<size_t>(b * S + s)] == 1 ? 1 : 0;
        pm[b] = count;
      }
    }
  }
  if (wants_output(ctx, 2)) write_output(ctx, 2, {B, S, H}, dtype, sum, op);
}

}  // namespace

void register_contrib_norm_kernels(sdk::KernelRegistry& r) {
  constexpr int kOpen = LOOM_OPSET_OPEN_END;
  // float and double: a float16 node is declined at placement.
  const std::vector<sdk::TypeConstraintSpec> types = {{"T", {LOOM_DTYPE_FLOAT, LOOM_DTYPE_DOUBLE}}};
  r.add(kMsDomain, "SkipLayerNormalization", 1, kOpen, skip_layer_norm<false>, types);
  r.add(kMsDomain, "SkipSimplifiedLayerNormalization", 1, kOpen, skip_layer_norm<true>, types);
  r.add(kMsDomain, "EmbedLayerNormalization", 1, kOpen, embed_layer_norm, types);
  r.add("", "SimplifiedLayerNormalization", 1, kOpen, simplified_layer_norm);
}

}  // namespace loom::reference
