// Loss functions: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss
// (opsets 12, 13). Both view the scores as [N, C, D] (D = product of the
// trailing dims, 1 for 2-D input) and the target as [N, D].
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "common/reduction_common.h"

namespace loom::reference {
namespace {

using sdk::KernelContext;

enum class Reduction { kNone, kSum, kMean };

struct LossAttrs {
  Reduction reduction = Reduction::kMean;
  bool has_ignore = false;
  int64_t ignore_index = 0;
};

LossAttrs loss_attrs(const sdk::Node& node, const std::string& op) {
  LossAttrs a;
  const std::string r = node.attr_string("reduction", "mean");
  if (r == "none")
    a.reduction = Reduction::kNone;
  else if (r == "sum")
    a.reduction = Reduction::kSum;
  else if (r == "mean")
    a.reduction = Reduction::kMean;
  else
    sdk::fail_invalid(op + ": unknown reduction '" + r + "'");
  if (auto ii = node.find_int("ignore_index")) {
    a.has_ignore = true;
    a.ignore_index = *ii;
  }
  return a;
}

// Computes the loss from log-probabilities `logp` ([N, C, D] as doubles) and
// writes output 0 with element type `dtype` (the scores' type): shape
// target_shape for reduction none, a scalar otherwise.
void nll_from_log_prob(KernelContext& ctx, const std::string& op, const LossAttrs& attrs, int32_t dtype,
                       const std::vector<double>& logp, int64_t N, int64_t C, int64_t D,
                       const sdk::ConstTensor& target, const sdk::ConstTensor& weight_t) {
  const Shape target_shape = target.shape();
  if (target.dtype() != LOOM_DTYPE_INT32 && target.dtype() != LOOM_DTYPE_INT64)
    sdk::fail_invalid(op + ": target must be int32 or int64, got " + sdk::dtype_name(target.dtype()));
  const std::vector<int64_t> labels = target.to_int64_vector();
  std::vector<double> weight;
  if (weight_t.exists()) {
    if (weight_t.rank() != 1 || weight_t.dim(0) != C)
      sdk::fail_invalid(op + ": weight must have shape [" + std::to_string(C) + "], got " +
                        shape_string(weight_t.shape()));
    weight = float_tensor_to_doubles(weight_t, op);
  }
  std::vector<double> loss(static_cast<size_t>(N * D), 0.0);
  double loss_sum = 0, weight_sum = 0;
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t d = 0; d < D; ++d) {
      const size_t i = static_cast<size_t>(n * D + d);
      const int64_t c = labels[i];
      if (attrs.has_ignore && c == attrs.ignore_index) continue;  // loss and weight 0
      if (c < 0 || c >= C)
        sdk::fail_invalid(op + ": target value " + std::to_string(c) + " out of range [0, " + std::to_string(C) +
                          ")");
      const double w = weight.empty() ? 1.0 : weight[static_cast<size_t>(c)];
      loss[i] = -logp[static_cast<size_t>((n * C + c) * D + d)] * w;
      loss_sum += loss[i];
      weight_sum += w;
    }
  }
  if (attrs.reduction == Reduction::kNone) {
    write_float_output(ctx, 0, target_shape, dtype, loss, op);
    return;
  }
  double result = loss_sum;
  if (attrs.reduction == Reduction::kMean) {
    // Without weights or ignore_index the mean runs over every element;
    // otherwise over the summed weights of the counted elements.
    const bool weighted = !weight.empty() || attrs.has_ignore;
    const double denom = weighted ? weight_sum : static_cast<double>(N * D);
    result = loss_sum / denom;
  }
  write_float_output(ctx, 0, {}, dtype, {result}, op);
}

// Checks input [N, C, d1..dk] against target [N, d1..dk]; returns {N, C, D}.
std::array<int64_t, 3> loss_dims(const Shape& in, const Shape& target, const std::string& op) {
  if (in.size() < 2) sdk::fail_invalid(op + ": scores must have rank >= 2, got " + shape_string(in));
  Shape expect{in[0]};
  expect.insert(expect.end(), in.begin() + 2, in.end());
  if (target != expect)
    sdk::fail_invalid(op + ": target shape " + shape_string(target) + " does not match scores shape " +
                      shape_string(in) + " (expected " + shape_string(expect) + ")");
  return {in[0], in[1], dims_product(in, 2, in.size())};
}

void nll_loss(KernelContext& ctx) {
  const std::string op = "NegativeLogLikelihoodLoss";
  const LossAttrs attrs = loss_attrs(ctx.node(), op);
  const sdk::ConstTensor x = ctx.required_input(0), target = ctx.required_input(1);
  const auto [N, C, D] = loss_dims(x.shape(), target.shape(), op);
  const std::vector<double> logp = float_tensor_to_doubles(x, op);
  nll_from_log_prob(ctx, op, attrs, x.dtype(), logp, N, C, D, target, ctx.input(2));
}

// SoftmaxCrossEntropyLoss: log-softmax over C, then the NLL loss; output 1
// (optional) is the log-probabilities with the scores' shape.
void sce_loss(KernelContext& ctx) {
  const std::string op = "SoftmaxCrossEntropyLoss";
  const LossAttrs attrs = loss_attrs(ctx.node(), op);
  const sdk::ConstTensor x = ctx.required_input(0), target = ctx.required_input(1);
  const Shape in = x.shape();
  const auto [N, C, D] = loss_dims(in, target.shape(), op);
  std::vector<double> logp = float_tensor_to_doubles(x, op);
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t d = 0; d < D; ++d) {
      // Bindings captured by copy of plain locals: clang 14 cannot capture
      // structured bindings.
      auto at = [&logp, n, d, c_count = C, d_count = D](int64_t c) -> double& {
        return logp[static_cast<size_t>((n * c_count + c) * d_count + d)];
      };
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t c = 0; c < C; ++c) m = std::max(m, at(c));
      double sum = 0;
      for (int64_t c = 0; c < C; ++c) sum += std::exp(at(c) - m);
      const double log_sum = std::log(sum) + m;
      for (int64_t c = 0; c < C; ++c) at(c) -= log_sum;
    }
  }
  nll_from_log_prob(ctx, op, attrs, x.dtype(), logp, N, C, D, target, ctx.input(2));
  if (wants_output(ctx, 1)) write_float_output(ctx, 1, in, x.dtype(), logp, op);
}

}  // namespace

void register_reduction_loss_kernels(sdk::KernelRegistry& r) {
  constexpr int kOpen = LOOM_OPSET_OPEN_END;
  r.add("", "NegativeLogLikelihoodLoss", 12, kOpen, nll_loss);
  r.add("", "SoftmaxCrossEntropyLoss", 12, kOpen, sce_loss);
}

}  // namespace loom::reference
