// Element-wise ops ONNX added after opset 17: BitwiseAnd/Or/Xor/Not-18,
// Gelu-20, Mish-18, Swish-24, SwiGLU-28 and BitCast-26. Activations
// compute in double and round once to the element type.
#include <cmath>
#include <cstring>

#include "common/elementwise_helpers.h"
#include "kernels/elementwise_internal.h"

namespace loom::reference {
namespace {

using sdk::KernelContext;

void bitwise_and(KernelContext& ctx) {
  binary<IntTypes, false>(ctx, "BitwiseAnd", [](auto a, auto b) { return static_cast<decltype(a)>(a & b); });
}
void bitwise_or(KernelContext& ctx) {
  binary<IntTypes, false>(ctx, "BitwiseOr", [](auto a, auto b) { return static_cast<decltype(a)>(a | b); });
}
void bitwise_xor(KernelContext& ctx) {
  binary<IntTypes, false>(ctx, "BitwiseXor", [](auto a, auto b) { return static_cast<decltype(a)>(a ^ b); });
}
void bitwise_not(KernelContext& ctx) {
  unary<IntTypes, false>(ctx, "BitwiseNot", [](auto a) { return static_cast<decltype(a)>(~a); });
}

// approximate = "none": x/2 (1 + erf(x / sqrt 2)); "tanh": the tanh form.
void gelu(KernelContext& ctx) {
  const std::string approximate = ctx.node().attr_string("approximate", "none");
  if (approximate != "none" && approximate != "tanh")
    sdk::fail_invalid("Gelu: attribute 'approximate' must be 'none' or 'tanh', got '" + approximate + "'");
  const bool tanh_form = approximate == "tanh";
  unary<FloatTypes, false>(ctx, "Gelu", [tanh_form](auto x) {
    const double v = static_cast<double>(x);
    const double y = tanh_form ? 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)))
                               : 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
    return static_cast<decltype(x)>(y);
  });
}

// x * tanh(softplus(x)), softplus split by sign so exp never overflows.
void mish(KernelContext& ctx) {
  unary<FloatTypes, false>(ctx, "Mish", [](auto x) {
    const double v = static_cast<double>(x);
    const double sp = v > 0 ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v));
    return static_cast<decltype(x)>(v * std::tanh(sp));
  });
}

// x * sigmoid(alpha * x).
void swish(KernelContext& ctx) {
  const double alpha = ctx.node().attr_float("alpha", 1.0f);
  unary<FloatTypes, false>(ctx, "Swish", [alpha](auto x) {
    const double v = static_cast<double>(x), a = alpha * v;
    const double s = a >= 0 ? 1 / (1 + std::exp(-a)) : std::exp(a) / (1 + std::exp(a));
    return static_cast<decltype(x)>(v * s);
  });
}

// SwiGLU: a * sigmoid(alpha * a) * b, broadcasting.
void swiglu(KernelContext& ctx) {
  const double alpha = ctx.node().attr_float("alpha", 1.0f);
  binary<FloatTypes, false>(ctx, "SwiGLU", [alpha](auto a, auto b) {
    const double v = static_cast<double>(a), s = alpha * v;
    const double gate = s >= 0 ? 1 / (1 + std::exp(-s)) : std::exp(s) / (1 + std::exp(s));
    return static_cast<decltype(a)>(v * gate * static_cast<double>(b));
  });
}

// The input's bytes as elements of type `to`, which must have the input
// type's width (a bool result is 0 or 1: any non-zero byte is true).
void bitcast(KernelContext& ctx) {
  const sdk::ConstTensor x = ctx.required_input(0);
  const int64_t to = ctx.node().attr_int("to", 0);
  const size_t in_size = sdk::dtype_size(x.dtype());
  const size_t out_size = to > 0 && to < 64 ? sdk::dtype_size(static_cast<int32_t>(to)) : 0;
  if (in_size == 0) sdk::fail_invalid("BitCast: input type " + sdk::dtype_name(x.dtype()) + " cannot be reinterpreted");
  if (out_size == 0) sdk::fail_invalid("BitCast: attribute 'to' (" + std::to_string(to) + ") is not a fixed-width type");
  if (in_size != out_size)
    sdk::fail_invalid("BitCast: " + sdk::dtype_name(x.dtype()) + " (" + std::to_string(in_size * 8) + " bits) and " +
                      sdk::dtype_name(static_cast<int32_t>(to)) + " (" + std::to_string(out_size * 8) +
                      " bits) differ in width");
  sdk::Tensor y = ctx.output(0, x.shape(), static_cast<int32_t>(to));
  const int64_t bytes = sdk::checked_mul(x.size(), static_cast<int64_t>(in_size), "BitCast: input bytes");
  if (bytes == 0) return;
  if (to == LOOM_DTYPE_BOOL) {
    const auto* src = static_cast<const unsigned char*>(x.raw_data());
    bool* dst = y.mutable_data<bool>();
    for (int64_t i = 0; i < bytes; ++i) dst[i] = src[i] != 0;
    return;
  }
  std::memcpy(y.raw_mutable_data(), x.raw_data(), static_cast<size_t>(bytes));
}

}  // namespace

void register_elementwise_recent_kernels(sdk::KernelRegistry& r) {
  constexpr int kEnd = LOOM_OPSET_OPEN_END;
  r.add("", "BitwiseAnd", 18, kEnd, bitwise_and);
  r.add("", "BitwiseOr", 18, kEnd, bitwise_or);
  r.add("", "BitwiseXor", 18, kEnd, bitwise_xor);
  r.add("", "BitwiseNot", 18, kEnd, bitwise_not).output_may_reuse_input(0, 0);
  r.add("", "Gelu", 20, kEnd, gelu).output_may_reuse_input(0, 0);
  r.add("", "Mish", 18, kEnd, mish).output_may_reuse_input(0, 0);
  r.add("", "Swish", 24, kEnd, swish).output_may_reuse_input(0, 0);
  r.add("", "SwiGLU", 28, kEnd, swiglu);
  r.add("", "BitCast", 26, kEnd, bitcast);
}

}  // namespace loom::reference
