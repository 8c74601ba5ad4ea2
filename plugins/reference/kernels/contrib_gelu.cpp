// com.microsoft activations with ONNX Runtime semantics: Gelu (erf form),
// FastGelu (tanh approximation, optional bias), QuickGelu (x * sigmoid(alpha
// x)) and BiasGelu (Gelu(A + B)).
// Also hosts register_contrib_kernels, the family's entry point.
#include <cmath>
#include <string>

#include "common/dispatch.h"
#include "common/shape.h"
#include "kernel_families.h"
#include "kernels/contrib_internal.h"

namespace loom::reference {
namespace {

using sdk::ConstTensor;
using sdk::KernelContext;

using ContribFloatTypes = TypeList<float, double>;

double gelu_erf(double x) { return 0.5 * x * (1.0 + std::erf(x * 0.70710678118654752440)); }

double gelu_tanh(double x) {
  constexpr double kAlpha = 0.7978845608028654;  // sqrt(2 / pi)
  constexpr double kGamma = 0.044715;
  return 0.5 * x * (1.0 + std::tanh(kAlpha * (x + kGamma * x * x * x)));
}

// y = f(x + bias), bias (optional) 1-D with x's last dim, broadcast over rows.
template <double (*F)(double)>
void biased_activation(KernelContext& ctx, const std::string& op, const ConstTensor& x, const ConstTensor* bias) {
  const Shape in = x.shape();
  int64_t cols = 0;
  if (bias != nullptr) {
    if (in.empty()) sdk::fail_invalid(op + ": input must have rank >= 1 when a bias is given");
    cols = in.back();
    if (bias->rank() != 1 || bias->dim(0) != cols)
      sdk::fail_invalid(op + ": bias must be 1-D with the input's last dimension (" + std::to_string(cols) +
                        "), got " + shape_string(bias->shape()));
    if (bias->dtype() != x.dtype()) sdk::fail_invalid(op + ": bias element type differs from the input's");
  }
  dispatch<ContribFloatTypes>(x.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    sdk::Tensor out = ctx.output(0, in, x.dtype());
    const int64_t n = out.size();
    if (n == 0) return;
    const T* px = x.data<T>();
    const T* pb = bias != nullptr ? bias->data<T>() : nullptr;
    T* py = out.mutable_data<T>();
    for (int64_t i = 0; i < n; ++i) {
      double v = static_cast<double>(px[i]);
      if (pb != nullptr) v += static_cast<double>(pb[i % cols]);
      py[i] = static_cast<T>(F(v));
    }
  });
}

void gelu(KernelContext& ctx) { biased_activation<gelu_erf>(ctx, "Gelu", ctx.required_input(0), nullptr); }

void fast_gelu(KernelContext& ctx) {
  const ConstTensor bias = ctx.input_count() > 1 ? ctx.input(1) : ConstTensor();
  biased_activation<gelu_tanh>(ctx, "FastGelu", ctx.required_input(0), bias.exists() ? &bias : nullptr);
}

// QuickGelu: y = x * sigmoid(alpha * x), alpha 1.702 by default (ONNX
// Runtime's CLIP-style approximation). Written in double: y = x / (1 + e^-ax).
class QuickGeluKernel {
 public:
  explicit QuickGeluKernel(const sdk::Node& node) : alpha_(node.attr_float("alpha", 1.702f)) {}
  void compute(KernelContext& ctx) const {
    const ConstTensor x = ctx.required_input(0);
    dispatch<ContribFloatTypes>(x.dtype(), "QuickGelu", [&](auto tag) {
      using T = decltype(tag);
      sdk::Tensor out = ctx.output(0, x.shape(), x.dtype());
      const T* px = x.data<T>();
      T* py = out.mutable_data<T>();
      for (int64_t i = 0; i < out.size(); ++i) {
        const double v = static_cast<double>(px[i]);
        py[i] = static_cast<T>(v / (1.0 + std::exp(-static_cast<double>(alpha_) * v)));
      }
    });
  }

 private:
  float alpha_;
};

void bias_gelu(KernelContext& ctx) {
  const ConstTensor bias = ctx.required_input(1);
  biased_activation<gelu_erf>(ctx, "BiasGelu", ctx.required_input(0), &bias);
}

}  // namespace

void register_contrib_kernels(sdk::KernelRegistry& r) {
  constexpr int kOpen = LOOM_OPSET_OPEN_END;
  const std::vector<sdk::TypeConstraintSpec> types = {{"T", {LOOM_DTYPE_FLOAT, LOOM_DTYPE_DOUBLE}}};
  r.add(kMsDomain, "Gelu", 1, kOpen, gelu, types);
  r.add(kMsDomain, "FastGelu", 1, kOpen, fast_gelu, types);
  r.add_class<QuickGeluKernel>(kMsDomain, "QuickGelu", 1, kOpen, types);
  r.add(kMsDomain, "BiasGelu", 1, kOpen, bias_gelu, types);
  register_contrib_norm_kernels(r);
  register_contrib_attention_kernels(r);
  register_contrib_matmul_kernels(r);
  register_contrib_fused_kernels(r);
}

}  // namespace loom::reference
