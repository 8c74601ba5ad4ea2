// Normalisations: BatchNormalization, InstanceNormalization,
// LayerNormalization, LRN, MeanVarianceNormalization, LpNormalization.
// Statistics are computed in double and rounded once at the end.
#include <cmath>

#include "common/norm_params.h"

namespace loom::reference {
namespace {

using sdk::KernelContext;

// BatchNormalization, opsets 1..15. X is viewed as [N, P, S]: P = C and
// S = spatial size normally, P = C*S and S = 1 for the legacy spatial=0
// (per-activation parameters). Training mode (opset 14+: training_mode=1;
// before 14: extra outputs requested) normalises with the batch statistics
// and reports running (and, before 14, saved) statistics.
void batch_norm(KernelContext& ctx) {
  const sdk::Node node = ctx.node();
  const int64_t opset = node.opset();
  const sdk::ConstTensor x = ctx.required_input(0);
  const Shape in = x.shape();
  if (in.size() < 2) sdk::fail_invalid("BatchNormalization: X must have rank >= 2, got " + shape_string(in));
  const double eps = node.attr_float("epsilon", 1e-5f);
  const double momentum = node.attr_float("momentum", 0.9f);
  // spatial=0 with per-channel parameters is the same as spatial=1.
  const bool spatial = opset >= 9 || node.attr_int("spatial", 1) != 0 || ctx.required_input(1).size() == in[1];
  bool training;
  if (opset >= 14)
    training = node.attr_int("training_mode", 0) != 0;
  else if (opset < 7 && node.attr_int("is_test", 0) != 0)
    training = false;
  else
    training = wants_output(ctx, 1) || wants_output(ctx, 2) || wants_output(ctx, 3) || wants_output(ctx, 4);

  const int64_t N = in[0];
  const int64_t P = spatial ? in[1] : dims_product(in, 1, in.size());
  const int64_t S = spatial ? dims_product(in, 2, in.size()) : 1;
  const std::string op = "BatchNormalization";
  auto param = [&](size_t i, const char* what) {
    const sdk::ConstTensor t = ctx.required_input(i);
    if (t.size() != P)
      sdk::fail_invalid(op + ": " + what + " has " + std::to_string(t.size()) + " elements, expected " +
                        std::to_string(P));
    return float_tensor_to_doubles(t, op);
  };
  const std::vector<double> scale = param(1, "scale"), bias = param(2, "B");
  std::vector<double> mean = param(3, "input_mean"), var = param(4, "input_var");
  const Shape param_shape = ctx.required_input(3).shape();
  // Running (and saved) statistics have input_mean's type (U from opset 15).
  const int32_t stat_type = ctx.required_input(3).dtype();

  std::vector<double> batch_mean, batch_var;
  if (training) {
    batch_mean.assign(static_cast<size_t>(P), 0.0);
    batch_var.assign(static_cast<size_t>(P), 0.0);
  }
  dispatch<FloatTypes>(x.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data<T>();
    auto at = [&](int64_t n, int64_t p, int64_t s) { return (n * P + p) * S + s; };
    if (training) {
      const double count = static_cast<double>(N * S);
      for (int64_t p = 0; p < P; ++p) {
        double sum = 0;
        for (int64_t n = 0; n < N; ++n)
          for (int64_t s = 0; s < S; ++s) sum += static_cast<double>(px[at(n, p, s)]);
        const double m = sum / count;
        double sq = 0;
        for (int64_t n = 0; n < N; ++n)
          for (int64_t s = 0; s < S; ++s) {
            const double d = static_cast<double>(px[at(n, p, s)]) - m;
            sq += d * d;
          }
        batch_mean[static_cast<size_t>(p)] = m;
        batch_var[static_cast<size_t>(p)] = sq / count;
      }
    }
    const std::vector<double>& use_mean = training ? batch_mean : mean;
    const std::vector<double>& use_var = training ? batch_var : var;
    sdk::Tensor out = ctx.output(0, in, x.dtype());
    if (out.size() == 0) return;
    T* py = out.mutable_data<T>();
    for (int64_t p = 0; p < P; ++p) {
      const size_t pi = static_cast<size_t>(p);
      const double mul = scale[pi] / std::sqrt(use_var[pi] + eps);
      const double add = bias[pi] - use_mean[pi] * mul;
      for (int64_t n = 0; n < N; ++n)
        for (int64_t s = 0; s < S; ++s) {
          const int64_t i = at(n, p, s);
          py[i] = to_elem<T>(static_cast<double>(px[i]) * mul + add);
        }
    }
  });
  if (!training) return;
  std::vector<double> running_mean(mean.size()), running_var(var.size());
  for (size_t p = 0; p < mean.size(); ++p) {
    running_mean[p] = mean[p] * momentum + batch_mean[p] * (1 - momentum);
    running_var[p] = var[p] * momentum + batch_var[p] * (1 - momentum);
  }
  if (wants_output(ctx, 1)) write_float_output(ctx, 1, param_shape, stat_type, running_mean, op);
  if (wants_output(ctx, 2)) write_float_output(ctx, 2, param_shape, stat_type, running_var, op);
  if (opset < 14) {
    if (wants_output(ctx, 3)) write_float_output(ctx, 3, param_shape, stat_type, batch_mean, op);
    if (wants_output(ctx, 4)) write_float_output(ctx, 4, param_shape, stat_type, batch_var, op);
  }
}

// InstanceNormalization (1, 6): per (n, c) mean and variance over the
// spatial dims.
void instance_norm(KernelContext& ctx) {
  const std::string op = "InstanceNormalization";
  const sdk::ConstTensor x = ctx.required_input(0);
  const Shape in = x.shape();
  if (in.size() < 2) sdk::fail_invalid(op + ": input must have rank >= 2, got " + shape_string(in));
  const double eps = ctx.node().attr_float("epsilon", 1e-5f);
  const int64_t N = in[0], C = in[1], S = dims_product(in, 2, in.size());
  const std::vector<double> scale = vector_param(ctx.required_input(1), C, op, "scale");
  const std::vector<double> bias = vector_param(ctx.required_input(2), C, op, "B");
  dispatch<FloatTypes>(x.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data<T>();
    sdk::Tensor out = ctx.output(0, in, x.dtype());
    if (out.size() == 0) return;
    T* py = out.mutable_data<T>();
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t c = 0; c < C; ++c) {
        const int64_t base = (n * C + c) * S;
        const auto [m, inv] = mean_and_inv_std(px + base, S, eps);
        const size_t ci = static_cast<size_t>(c);
        for (int64_t s = 0; s < S; ++s)
          py[base + s] = to_elem<T>((static_cast<double>(px[base + s]) - m) * inv * scale[ci] + bias[ci]);
      }
    }
  });
}

// LayerNormalization (17): normalises over dims [axis, rank); Mean and
// InvStdDev (optional outputs) have shape dims[:axis] + [1] * (rank - axis).
void layer_norm(KernelContext& ctx) {
  const std::string op = "LayerNormalization";
  const sdk::Node node = ctx.node();
  const sdk::ConstTensor x = ctx.required_input(0);
  const Shape in = x.shape();
  const int64_t rank = static_cast<int64_t>(in.size());
  if (rank == 0) sdk::fail_invalid(op + ": input must have rank >= 1");
  const int64_t axis = normalize_axis(node.attr_int("axis", -1), rank, op);
  const double eps = node.attr_float("epsilon", 1e-5f);
  const Shape norm_shape(in.begin() + axis, in.end());
  const int64_t rows = dims_product(in, 0, static_cast<size_t>(axis));
  const int64_t cols = element_count(norm_shape);
  const std::vector<double> scale = expand_param(ctx.required_input(1), norm_shape, op, "Scale");
  std::vector<double> bias(static_cast<size_t>(cols), 0.0);
  if (ctx.input(2).exists()) bias = expand_param(ctx.input(2), norm_shape, op, "B");
  std::vector<double> means(static_cast<size_t>(rows)), inv_stds(static_cast<size_t>(rows));
  dispatch<FloatTypes>(x.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data<T>();
    sdk::Tensor out = ctx.output(0, in, x.dtype());
    T* py = out.size() == 0 ? nullptr : out.mutable_data<T>();
    for (int64_t r = 0; r < rows; ++r) {
      const T* row = px + r * cols;
      double sum = 0;
      for (int64_t c = 0; c < cols; ++c) sum += static_cast<double>(row[c]);
      const double m = sum / static_cast<double>(cols);
      double sq = 0;
      for (int64_t c = 0; c < cols; ++c) {
        const double d = static_cast<double>(row[c]) - m;
        sq += d * d;
      }
      const double inv = 1.0 / std::sqrt(sq / static_cast<double>(cols) + eps);
      means[static_cast<size_t>(r)] = m;
      inv_stds[static_cast<size_t>(r)] = inv;
      for (int64_t c = 0; c < cols; ++c) {
        const size_t ci = static_cast<size_t>(c);
        py[r * cols + c] = to_elem<T>((static_cast<double>(row[c]) - m) * inv * scale[ci] + bias[ci]);
      }
    }
  });
  Shape stat_shape(in.begin(), in.begin() + axis);
  // Mean and InvStdDev have the stash_type (default float), as in ONNX type inference.
  const int32_t stash_type = static_cast<int32_t>(node.attr_int("stash_type", LOOM_DTYPE_FLOAT));
  stat_shape.resize(in.size(), 1);
  if (wants_output(ctx, 1)) write_float_output(ctx, 1, stat_shape, stash_type, means, op);
  if (wants_output(ctx, 2)) write_float_output(ctx, 2, stat_shape, stash_type, inv_stds, op);
}

// LRN (1, 13): across-channel local response normalisation.
void lrn(KernelContext& ctx) {
  const std::string op = "LRN";
  const sdk::Node node = ctx.node();
  const sdk::ConstTensor x = ctx.required_input(0);
  const Shape in = x.shape();
  if (in.size() < 2) sdk::fail_invalid(op + ": input must have rank >= 2, got " + shape_string(in));
  const int64_t size = node.required_int("size");
  if (size <= 0) sdk::fail_invalid(op + ": size must be positive, got " + std::to_string(size));
  const double alpha = node.attr_float("alpha", 1e-4f), beta = node.attr_float("beta", 0.75f),
               bias = node.attr_float("bias", 1.0f);
  const int64_t N = in[0], C = in[1], S = dims_product(in, 2, in.size());
  const int64_t before = (size - 1) / 2, after = size - 1 - before;  // floor and ceil of (size-1)/2
  dispatch<FloatTypes>(x.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data<T>();
    sdk::Tensor out = ctx.output(0, in, x.dtype());
    if (out.size() == 0) return;
    T* py = out.mutable_data<T>();
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t s = 0; s < S; ++s) {
          double sq = 0;
          for (int64_t k = std::max<int64_t>(0, c - before); k <= std::min(C - 1, c + after); ++k) {
            const double v = static_cast<double>(px[(n * C + k) * S + s]);
            sq += v * v;
          }
          const int64_t i = (n * C + c) * S + s;
          py[i] = to_elem<T>(static_cast<double>(px[i]) / std::pow(bias + alpha / static_cast<double>(size) * sq, beta));
        }
  });
}

// MeanVarianceNormalization (9, 13): (X - mean) / (sqrt(var) + 1e-9) with the
// statistics taken over `axes` (default [0, 2, 3]).
void mvn(KernelContext& ctx) {
  const std::string op = "MeanVarianceNormalization";
  const sdk::ConstTensor x = ctx.required_input(0);
  const Shape in = x.shape();
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<bool> reduced(in.size(), false);
  for (int64_t a : ctx.node().attr_ints("axes", {0, 2, 3})) reduced[static_cast<size_t>(normalize_axis(a, rank, op))] = true;
  // Group id of every element: its row-major index over the kept dims.
  const int64_t total = element_count(in);
  std::vector<int64_t> group(static_cast<size_t>(total));
  int64_t groups = 1;
  {
    Shape gstride(in.size(), 0);
    for (int64_t d = rank - 1; d >= 0; --d)
      if (!reduced[static_cast<size_t>(d)]) {
        gstride[static_cast<size_t>(d)] = groups;
        groups *= in[static_cast<size_t>(d)];
      }
    Shape idx(in.size(), 0);
    int64_t g = 0;
    for (int64_t i = 0; i < total; ++i) {
      group[static_cast<size_t>(i)] = g;
      for (int64_t d = rank - 1; d >= 0; --d) {
        const size_t du = static_cast<size_t>(d);
        ++idx[du];
        g += gstride[du];
        if (idx[du] < in[du]) break;
        g -= gstride[du] * in[du];
        idx[du] = 0;
      }
    }
  }
  std::vector<double> sum(static_cast<size_t>(groups), 0.0), sq(static_cast<size_t>(groups), 0.0),
      cnt(static_cast<size_t>(groups), 0.0);
  dispatch<FloatTypes>(x.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data<T>();
    sdk::Tensor out = ctx.output(0, in, x.dtype());
    if (total == 0) return;
    T* py = out.mutable_data<T>();
    for (int64_t i = 0; i < total; ++i) {
      const size_t g = static_cast<size_t>(group[static_cast<size_t>(i)]);
      sum[g] += static_cast<double>(px[i]);
      cnt[g] += 1;
    }
    for (size_t g = 0; g < sum.size(); ++g) sum[g] /= cnt[g];  // now the mean
    for (int64_t i = 0; i < total; ++i) {
      const size_t g = static_cast<size_t>(group[static_cast<size_t>(i)]);
      const double d = static_cast<double>(px[i]) - sum[g];
      sq[g] += d * d;
    }
    for (size_t g = 0; g < sq.size(); ++g) sq[g] = std::sqrt(sq[g] / cnt[g]) + 1e-9;  // now std + eps
    for (int64_t i = 0; i < total; ++i) {
      const size_t g = static_cast<size_t>(group[static_cast<size_t>(i)]);
      py[i] = to_elem<T>((static_cast<double>(px[i]) - sum[g]) / sq[g]);
    }
  });
}

// LpNormalization (1): x / ||x||_p along `axis` (p = 1 or 2); a zero norm
// gives zeros.
void lp_norm(KernelContext& ctx) {
  const std::string op = "LpNormalization";
  const sdk::ConstTensor x = ctx.required_input(0);
  const Shape in = x.shape();
  if (in.empty()) sdk::fail_invalid(op + ": input must have rank >= 1");
  const int64_t axis = normalize_axis(ctx.node().attr_int("axis", -1), static_cast<int64_t>(in.size()), op);
  const int64_t p = ctx.node().attr_int("p", 2);
  if (p != 1 && p != 2) sdk::fail_invalid(op + ": p must be 1 or 2, got " + std::to_string(p));
  const AxisView v(in, axis);
  dispatch<FloatTypes>(x.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data<T>();
    sdk::Tensor out = ctx.output(0, in, x.dtype());
    if (out.size() == 0) return;
    T* py = out.mutable_data<T>();
    for (int64_t o = 0; o < v.outer; ++o)
      for (int64_t i = 0; i < v.inner; ++i) {
        const int64_t base = o * v.n * v.inner + i;
        double norm = 0;
        for (int64_t k = 0; k < v.n; ++k) {
          const double d = static_cast<double>(px[base + k * v.inner]);
          norm += p == 1 ? std::fabs(d) : d * d;
        }
        if (p == 2) norm = std::sqrt(norm);
        for (int64_t k = 0; k < v.n; ++k) {
          const int64_t at = base + k * v.inner;
          py[at] = to_elem<T>(norm == 0 ? 0.0 : static_cast<double>(px[at]) / norm);
        }
      }
  });
}

}  // namespace

void register_reduction_norm_kernels(sdk::KernelRegistry& r) {
  constexpr int kOpen = LOOM_OPSET_OPEN_END;
  r.add("", "BatchNormalization", 1, kOpen, batch_norm);
  r.add("", "InstanceNormalization", 1, kOpen, instance_norm);
  // Opsets 1-16: ONNX Runtime's contrib LayerNormalization in the default
  // domain, same semantics (see is_known_onnx_op).
  r.add("", "LayerNormalization", 1, kOpen, layer_norm);
  r.add("", "LRN", 1, kOpen, lrn);
  r.add("", "MeanVarianceNormalization", 9, kOpen, mvn);
  r.add("", "LpNormalization", 1, kOpen, lp_norm);
}

}  // namespace loom::reference
