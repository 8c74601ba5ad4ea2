// Element-wise unary kernels: math functions and activations (with their
// attributes). Float16/BFloat16 compute in float.
#include <cmath>

#include "common/elementwise_helpers.h"
#include "kernels/elementwise_internal.h"

namespace loom::reference {
namespace {

using sdk::KernelContext;

// Registers a float-only unary function kernel named `op`.
#define LOOM_FLOAT_UNARY(fn_name, op, expr)                                            \
  void fn_name(KernelContext& ctx) {                                                   \
    unary<FloatTypes, false>(ctx, op, [](auto x) { return static_cast<decltype(x)>(expr); }); \
  }

LOOM_FLOAT_UNARY(exp_kernel, "Exp", std::exp(x))
LOOM_FLOAT_UNARY(log_kernel, "Log", std::log(x))
LOOM_FLOAT_UNARY(sqrt_kernel, "Sqrt", std::sqrt(x))
LOOM_FLOAT_UNARY(reciprocal, "Reciprocal", decltype(x)(1) / x)
LOOM_FLOAT_UNARY(floor_kernel, "Floor", std::floor(x))
LOOM_FLOAT_UNARY(ceil_kernel, "Ceil", std::ceil(x))
LOOM_FLOAT_UNARY(round_kernel, "Round", std::nearbyint(x))  // default rounding: half to even
LOOM_FLOAT_UNARY(erf_kernel, "Erf", std::erf(x))
LOOM_FLOAT_UNARY(sin_kernel, "Sin", std::sin(x))
LOOM_FLOAT_UNARY(cos_kernel, "Cos", std::cos(x))
LOOM_FLOAT_UNARY(tan_kernel, "Tan", std::tan(x))
LOOM_FLOAT_UNARY(asin_kernel, "Asin", std::asin(x))
LOOM_FLOAT_UNARY(acos_kernel, "Acos", std::acos(x))
LOOM_FLOAT_UNARY(atan_kernel, "Atan", std::atan(x))
LOOM_FLOAT_UNARY(sinh_kernel, "Sinh", std::sinh(x))
LOOM_FLOAT_UNARY(cosh_kernel, "Cosh", std::cosh(x))
LOOM_FLOAT_UNARY(asinh_kernel, "Asinh", std::asinh(x))
LOOM_FLOAT_UNARY(acosh_kernel, "Acosh", std::acosh(x))
LOOM_FLOAT_UNARY(atanh_kernel, "Atanh", std::atanh(x))
LOOM_FLOAT_UNARY(tanh_kernel, "Tanh", std::tanh(x))
// Split by sign so exp never overflows.
LOOM_FLOAT_UNARY(sigmoid, "Sigmoid",
                 x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x)))
LOOM_FLOAT_UNARY(softplus, "Softplus", x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)))
LOOM_FLOAT_UNARY(softsign, "Softsign", x / (1 + std::abs(x)))
#undef LOOM_FLOAT_UNARY

void abs_kernel(KernelContext& ctx) {
  unary<NumericTypes, false>(ctx, "Abs", [](auto x) {
    using C = decltype(x);
    if constexpr (std::is_unsigned_v<C>) {
      return x;
    } else if constexpr (std::is_integral_v<C>) {
      return x < 0 ? sub_wrap(C(0), x) : x;
    } else {
      return std::abs(x);
    }
  });
}

void neg(KernelContext& ctx) {
  unary<SignedNumericTypes, false>(ctx, "Neg", [](auto x) {
    using C = decltype(x);
    if constexpr (std::is_integral_v<C>) {
      return sub_wrap(C(0), x);
    } else {
      return -x;
    }
  });
}

void sign(KernelContext& ctx) {
  unary<NumericTypes, false>(ctx, "Sign", [](auto x) {
    using C = decltype(x);
    if (is_nan_value(x)) return x;
    return static_cast<C>(x > C(0) ? 1 : (x < C(0) ? -1 : 0));
  });
}

void is_nan(KernelContext& ctx) {
  unary<FloatTypes, true>(ctx, "IsNaN", [](auto x) { return std::isnan(x); });
}

void is_inf(KernelContext& ctx) {
  const bool pos = ctx.node().attr_int("detect_positive", 1) != 0;
  const bool neg = ctx.node().attr_int("detect_negative", 1) != 0;
  unary<FloatTypes, true>(ctx, "IsInf", [pos, neg](auto x) {
    return std::isinf(x) && ((x > 0 && pos) || (x < 0 && neg));
  });
}

void relu(KernelContext& ctx) {
  unary<SignedNumericTypes, false>(ctx, "Relu", [](auto x) { return x > decltype(x)(0) ? x : decltype(x)(0); });
}

void leaky_relu(KernelContext& ctx) {
  const float alpha = ctx.node().attr_float("alpha", 0.01f);
  unary<FloatTypes, false>(ctx, "LeakyRelu", [alpha](auto x) {
    using C = decltype(x);
    return x < 0 ? static_cast<C>(alpha) * x : x;
  });
}

void elu(KernelContext& ctx) {
  const float alpha = ctx.node().attr_float("alpha", 1.0f);
  unary<FloatTypes, false>(ctx, "Elu", [alpha](auto x) {
    using C = decltype(x);
    return x >= 0 ? x : static_cast<C>(alpha) * (std::exp(x) - C(1));
  });
}

void selu(KernelContext& ctx) {
  const float alpha = ctx.node().attr_float("alpha", 1.67326319217681884765625f);
  const float gamma = ctx.node().attr_float("gamma", 1.05070102214813232421875f);
  unary<FloatTypes, false>(ctx, "Selu", [alpha, gamma](auto x) {
    using C = decltype(x);
    const C g = static_cast<C>(gamma), a = static_cast<C>(alpha);
    return x > 0 ? g * x : g * (a * std::exp(x) - a);
  });
}

void celu(KernelContext& ctx) {
  const float alpha = ctx.node().attr_float("alpha", 1.0f);
  if (alpha == 0.0f) sdk::fail_invalid("Celu: alpha must not be 0");
  unary<FloatTypes, false>(ctx, "Celu", [alpha](auto x) {
    using C = decltype(x);
    const C a = static_cast<C>(alpha);
    return x > 0 ? x : a * (std::exp(x / a) - C(1));
  });
}

void hard_sigmoid(KernelContext& ctx) {
  const float alpha = ctx.node().attr_float("alpha", 0.2f);
  const float beta = ctx.node().attr_float("beta", 0.5f);
  unary<FloatTypes, false>(ctx, "HardSigmoid", [alpha, beta](auto x) {
    using C = decltype(x);
    const C v = static_cast<C>(alpha) * x + static_cast<C>(beta);
    return std::max(C(0), std::min(C(1), v));
  });
}

void hard_swish(KernelContext& ctx) {
  unary<FloatTypes, false>(ctx, "HardSwish", [](auto x) {
    using C = decltype(x);
    const C v = x / C(6) + C(0.5);
    return x * std::max(C(0), std::min(C(1), v));
  });
}

void thresholded_relu(KernelContext& ctx) {
  const float alpha = ctx.node().attr_float("alpha", 1.0f);
  unary<FloatTypes, false>(ctx, "ThresholdedRelu", [alpha](auto x) {
    using C = decltype(x);
    return x > static_cast<C>(alpha) ? x : C(0);
  });
}

void shrink(KernelContext& ctx) {
  const double lambd = ctx.node().attr_float("lambd", 0.5f);
  const double bias = ctx.node().attr_float("bias", 0.0f);
  unary<NumericTypes, false>(ctx, "Shrink", [lambd, bias](auto x) {
    using C = decltype(x);
    const double v = static_cast<double>(x);
    if (v < -lambd) return convert_value<C>(v + bias);
    if (v > lambd) return convert_value<C>(v - bias);
    return C(0);
  });
}

}  // namespace

// Every kernel here maps element i to element i of a same-typed output in
// one pass, so the output may take over its input's buffer.
void register_elementwise_unary_kernels(sdk::KernelRegistry& r) {
  constexpr int kEnd = LOOM_OPSET_OPEN_END;
  r.add("", "Abs", 1, kEnd, abs_kernel).output_may_reuse_input(0, 0);
  r.add("", "Neg", 1, kEnd, neg).output_may_reuse_input(0, 0);
  r.add("", "Exp", 1, kEnd, exp_kernel).output_may_reuse_input(0, 0);
  r.add("", "Log", 1, kEnd, log_kernel).output_may_reuse_input(0, 0);
  r.add("", "Sqrt", 1, kEnd, sqrt_kernel).output_may_reuse_input(0, 0);
  r.add("", "Reciprocal", 1, kEnd, reciprocal).output_may_reuse_input(0, 0);
  r.add("", "Floor", 1, kEnd, floor_kernel).output_may_reuse_input(0, 0);
  r.add("", "Ceil", 1, kEnd, ceil_kernel).output_may_reuse_input(0, 0);
  r.add("", "Round", 11, kEnd, round_kernel).output_may_reuse_input(0, 0);
  r.add("", "Sign", 9, kEnd, sign).output_may_reuse_input(0, 0);
  r.add("", "Erf", 9, kEnd, erf_kernel).output_may_reuse_input(0, 0);
  r.add("", "Sin", 7, kEnd, sin_kernel).output_may_reuse_input(0, 0);
  r.add("", "Cos", 7, kEnd, cos_kernel).output_may_reuse_input(0, 0);
  r.add("", "Tan", 7, kEnd, tan_kernel).output_may_reuse_input(0, 0);
  r.add("", "Asin", 7, kEnd, asin_kernel).output_may_reuse_input(0, 0);
  r.add("", "Acos", 7, kEnd, acos_kernel).output_may_reuse_input(0, 0);
  r.add("", "Atan", 7, kEnd, atan_kernel).output_may_reuse_input(0, 0);
  r.add("", "Sinh", 9, kEnd, sinh_kernel).output_may_reuse_input(0, 0);
  r.add("", "Cosh", 9, kEnd, cosh_kernel).output_may_reuse_input(0, 0);
  r.add("", "Asinh", 9, kEnd, asinh_kernel).output_may_reuse_input(0, 0);
  r.add("", "Acosh", 9, kEnd, acosh_kernel).output_may_reuse_input(0, 0);
  r.add("", "Atanh", 9, kEnd, atanh_kernel).output_may_reuse_input(0, 0);
  r.add("", "IsNaN", 9, kEnd, is_nan);
  r.add("", "IsInf", 10, kEnd, is_inf);
  r.add("", "Sigmoid", 1, kEnd, sigmoid).output_may_reuse_input(0, 0);
  r.add("", "Tanh", 1, kEnd, tanh_kernel).output_may_reuse_input(0, 0);
  r.add("", "Softplus", 1, kEnd, softplus).output_may_reuse_input(0, 0);
  r.add("", "Softsign", 1, kEnd, softsign).output_may_reuse_input(0, 0);
  r.add("", "Relu", 1, kEnd, relu).output_may_reuse_input(0, 0);
  r.add("", "LeakyRelu", 1, kEnd, leaky_relu).output_may_reuse_input(0, 0);
  r.add("", "Elu", 1, kEnd, elu).output_may_reuse_input(0, 0);
  r.add("", "Selu", 1, kEnd, selu).output_may_reuse_input(0, 0);
  r.add("", "Celu", 12, kEnd, celu).output_may_reuse_input(0, 0);
  r.add("", "HardSigmoid", 1, kEnd, hard_sigmoid).output_may_reuse_input(0, 0);
  r.add("", "HardSwish", 14, kEnd, hard_swish).output_may_reuse_input(0, 0);
  r.add("", "ThresholdedRelu", 10, kEnd, thresholded_relu).output_may_reuse_input(0, 0);
  r.add("", "Shrink", 9, kEnd, shrink).output_may_reuse_input(0, 0);
}

}  // namespace loom::reference
