// Normalisations ONNX added after opset 17: RMSNormalization-23 and
// GroupNormalization-18/21. Statistics are computed in double (whatever
// stash_type says: at least as precise as it asks) and rounded once.
#include <cmath>

#include "common/norm_params.h"

namespace loom::reference {
namespace {

using sdk::KernelContext;

// RMSNormalization (23): Y = X / sqrt(mean(X^2 over dims [axis, rank)) +
// epsilon) * scale, scale broadcast to those dims; Y has scale's type.
void rms_norm(KernelContext& ctx) {
  const std::string op = "RMSNormalization";
  const sdk::ConstTensor x = ctx.required_input(0);
  const sdk::ConstTensor scale_t = ctx.required_input(1);
  const Shape in = x.shape();
  const int64_t rank = static_cast<int64_t>(in.size());
  if (rank == 0) sdk::fail_invalid(op + ": X must have rank >= 1");
  const int64_t axis = normalize_axis(ctx.node().attr_int("axis", -1), rank, op);
  const double eps = ctx.node().attr_float("epsilon", 1e-5f);
  const Shape norm_shape(in.begin() + axis, in.end());
  const int64_t cols = sdk::checked_element_count(norm_shape, op + ": normalized size");
  const int64_t rows = sdk::checked_element_count(Shape(in.begin(), in.begin() + axis), op + ": row count");
  const std::vector<double> scale = expand_param(scale_t, norm_shape, op, "scale");
  const std::vector<double> xs = float_tensor_to_doubles(x, op);
  dispatch<FloatTypes>(scale_t.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    sdk::Tensor out = ctx.output(0, in, scale_t.dtype());
    if (out.size() == 0) return;
    T* py = out.mutable_data<T>();
    for (int64_t r = 0; r < rows; ++r) {
      const double* row = xs.data() + r * cols;
      double sq = 0;
      for (int64_t c = 0; c < cols; ++c) sq += row[c] * row[c];
      const double inv = 1.0 / std::sqrt(sq / static_cast<double>(cols) + eps);
      for (int64_t c = 0; c < cols; ++c)
        py[r * cols + c] = to_elem<T>(row[c] * inv * scale[static_cast<size_t>(c)]);
    }
  });
}

// GroupNormalization: X [N, C, spatial...] in num_groups groups of C /
// num_groups channels, each normalised over its channels and spatial
// positions. scale and bias are per channel ([C], opset 21) or, in opset
// 18, per group ([num_groups]).
void group_norm(KernelContext& ctx) {
  const std::string op = "GroupNormalization";
  const sdk::ConstTensor x = ctx.required_input(0);
  const Shape in = x.shape();
  if (in.size() < 2) sdk::fail_invalid(op + ": X must have rank >= 2, got " + shape_string(in));
  const int64_t groups = ctx.node().attr_int("num_groups", 0);
  const int64_t N = in[0], C = in[1];
  if (groups <= 0 || C % groups != 0)
    sdk::fail_invalid(op + ": num_groups (" + std::to_string(groups) + ") must be positive and divide the " +
                      std::to_string(C) + " channels");
  const double eps = ctx.node().attr_float("epsilon", 1e-5f);
  const bool per_group = ctx.node().opset() < 21;
  const int64_t params = per_group ? groups : C;
  const std::vector<double> scale = vector_param(ctx.required_input(1), params, op, "scale");
  const std::vector<double> bias = vector_param(ctx.required_input(2), params, op, "bias");
  const int64_t S = sdk::checked_element_count(Shape(in.begin() + 2, in.end()), op + ": spatial size");
  const int64_t per = C / groups;
  const int64_t count = sdk::checked_mul(per, S, op + ": group size");
  dispatch<FloatTypes>(x.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data<T>();
    sdk::Tensor out = ctx.output(0, in, x.dtype());
    if (out.size() == 0) return;
    T* py = out.mutable_data<T>();
    for (int64_t n = 0; n < N; ++n)
      for (int64_t g = 0; g < groups; ++g) {
        const int64_t base = (n * C + g * per) * S;  // the group's channels are contiguous
        const auto [mean, inv] = mean_and_inv_std(px + base, count, eps);
        for (int64_t i = 0; i < count; ++i) {
          const size_t p = static_cast<size_t>(per_group ? g : g * per + i / S);
          py[base + i] = to_elem<T>((static_cast<double>(px[base + i]) - mean) * inv * scale[p] + bias[p]);
        }
      }
  });
}

}  // namespace

void register_reduction_norm_recent_kernels(sdk::KernelRegistry& r) {
  constexpr int kOpen = LOOM_OPSET_OPEN_END;
  r.add("", "RMSNormalization", 23, kOpen, rms_norm);
  r.add("", "GroupNormalization", 18, kOpen, group_norm);
}

}  // namespace loom::reference
