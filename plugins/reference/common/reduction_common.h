// Helpers shared by the reduction family (kernels/reduction*.cpp): the
// family's sub-registrations and an outer/axis/inner view of a tensor.
#pragma once

#include <cmath>
#include <string>
#include <type_traits>

#include "common/dispatch.h"
#include "common/shape.h"

namespace loom::reference {

// Sub-registrations, called from register_reduction_kernels.
void register_reduction_softmax_kernels(sdk::KernelRegistry& r);  // Softmax, LogSoftmax, Hardmax, CumSum, TopK
void register_reduction_norm_kernels(sdk::KernelRegistry& r);     // Batch/Instance/Layer/Lp norm, LRN, MVN
void register_reduction_norm_recent_kernels(sdk::KernelRegistry& r);  // RMSNormalization, GroupNormalization
void register_reduction_loss_kernels(sdk::KernelRegistry& r);     // NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss
void register_reduction_linalg_kernels(sdk::KernelRegistry& r);   // Det, Einsum

// A tensor viewed as [outer, n, inner] around one axis: element (o, k, i)
// lives at (o * n + k) * inner + i.
struct AxisView {
  int64_t outer = 1, n = 1, inner = 1;
  AxisView() = default;
  AxisView(const Shape& s, int64_t axis)
      : outer(dims_product(s, 0, static_cast<size_t>(axis))),
        n(s.empty() ? 1 : s[static_cast<size_t>(axis)]),
        inner(dims_product(s, static_cast<size_t>(axis) + 1, s.size())) {}
};

// Accumulator type for sums over T: double for floating point, int64/uint64
// for integers.
template <class T>
using acc_t = std::conditional_t<is_float_v<T>, double,
                                 std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;

// Converts a computed value back to the element type (the 16-bit floats only
// construct from float).
template <class T, class V>
inline T to_elem(V v) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>)
    return T(static_cast<float>(v));
  else
    return static_cast<T>(v);
}

template <class T>
inline bool is_nan_value(T v) {
  if constexpr (is_float_v<T>)
    return std::isnan(static_cast<double>(v));
  else
    return false;
}

// The 'axis' value of a shape-like input (scalar or 1-element tensor).
inline int64_t scalar_int_input(const sdk::ConstTensor& t, std::string_view op, std::string_view what) {
  const std::vector<int64_t> v = t.to_int64_vector();
  if (v.size() != 1)
    sdk::fail_invalid(std::string(op) + ": input '" + std::string(what) + "' must hold one value, got " +
                      std::to_string(v.size()));
  return v[0];
}

// Every element of a floating-point tensor as double (parameters such as
// scale, bias, mean and weights may have their own float type).
inline std::vector<double> float_tensor_to_doubles(const sdk::ConstTensor& t, std::string_view op) {
  std::vector<double> out(static_cast<size_t>(t.size()));
  if (out.empty()) return out;
  dispatch<FloatTypes>(t.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    const T* p = t.data<T>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<double>(p[i]);
  });
  return out;
}

// Allocates output `index` with `dims` and floating-point element type
// `dtype`, and fills it from `values`, converted to that type.
inline void write_float_output(sdk::KernelContext& ctx, size_t index, const Shape& dims, int32_t dtype,
                               const std::vector<double>& values, std::string_view op) {
  sdk::Tensor out = ctx.output(index, dims, dtype);
  if (out.size() == 0) return;
  dispatch<FloatTypes>(out.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    T* p = out.mutable_data<T>();
    for (size_t i = 0; i < values.size(); ++i) p[i] = to_elem<T>(values[i]);
  });
}

// True when the node has output `index` under a non-empty name.
inline bool wants_output(sdk::KernelContext& ctx, size_t index) {
  return index < ctx.output_count() && !ctx.node().output_name(index).empty();
}

}  // namespace loom::reference
