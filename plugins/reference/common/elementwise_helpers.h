// Helpers for the reference EP's element-wise kernels: broadcasting unary and
// binary loops, legacy (opset < 7) broadcasting, wrap-around integer
// arithmetic and well-defined float -> integer conversion.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>

#include "common/broadcast.h"
#include "common/dispatch.h"

namespace loom::reference {

template <class C>
constexpr bool is_nan_value(C v) {
  if constexpr (std::is_floating_point_v<C>) {
    return std::isnan(v);
  } else {
    (void)v;
    return false;
  }
}

// Unsigned type wide enough to do two's-complement arithmetic on C without
// integer promotion turning it into signed overflow.
template <class C>
using wrap_t = std::conditional_t<(sizeof(C) < sizeof(unsigned)), unsigned, std::make_unsigned_t<C>>;

// Integer add/sub/mul wrap around (like numpy); floats behave normally.
template <class C>
C add_wrap(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    using W = wrap_t<C>;
    return static_cast<C>(static_cast<W>(a) + static_cast<W>(b));
  } else {
    return a + b;
  }
}
template <class C>
C sub_wrap(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    using W = wrap_t<C>;
    return static_cast<C>(static_cast<W>(a) - static_cast<W>(b));
  } else {
    return a - b;
  }
}
template <class C>
C mul_wrap(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    using W = wrap_t<C>;
    return static_cast<C>(static_cast<W>(a) * static_cast<W>(b));
  } else {
    return a * b;
  }
}

// Converts a floating value to integer type I without undefined behaviour,
// matching numpy on x86: truncation toward zero through a 32-bit (narrow
// types) or 64-bit (int64, uint32, uint64) conversion whose NaN and
// out-of-range result is the "integer indefinite" value (minimum signed),
// then narrowing modulo 2^bits.
template <class I>
I float_to_int(double v) {
  static_assert(std::is_integral_v<I>);
  if constexpr (std::is_same_v<I, bool>) {
    return v != 0.0;
  } else if constexpr (std::is_same_v<I, uint64_t>) {
    if (v >= 0.0 && v < 18446744073709551616.0) return static_cast<uint64_t>(v);
    if (v < 0.0 && v >= -9223372036854775808.0) return static_cast<uint64_t>(static_cast<int64_t>(v));
    return static_cast<uint64_t>(1) << 63;
  } else if constexpr (sizeof(I) == 8 || std::is_same_v<I, uint32_t>) {
    int64_t w = std::numeric_limits<int64_t>::min();
    if (v >= -9223372036854775808.0 && v < 9223372036854775808.0) w = static_cast<int64_t>(v);
    return static_cast<I>(static_cast<uint64_t>(w));
  } else {
    int32_t w = std::numeric_limits<int32_t>::min();
    if (v > -2147483649.0 && v < 2147483648.0) w = static_cast<int32_t>(v);
    return static_cast<I>(static_cast<uint32_t>(w));
  }
}

// Converts between any two arithmetic compute types (after compute_t): float
// to integer goes through float_to_int, everything else is a static_cast;
// anything to bool is "!= 0".
template <class To, class From>
To convert_value(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    return float_to_int<To>(static_cast<double>(v));
  } else if constexpr (std::is_integral_v<To> && std::is_integral_v<From>) {
    return static_cast<To>(v);  // modular
  } else {
    return static_cast<To>(v);
  }
}

// Operand shapes of a binary op. For opsets < 7 with broadcast=1, B is
// reshaped so that it lines up with A starting at `axis` (suffix matching
// when axis is absent); a one-element B is a scalar.
struct BinaryShapes {
  Shape a, b, out;
};

inline Shape legacy_broadcast_shape(const Shape& a, const Shape& b, const sdk::Node& node,
                                    std::string_view op) {
  if (element_count(b) == 1) return Shape{};
  const int64_t ra = static_cast<int64_t>(a.size()), rb = static_cast<int64_t>(b.size());
  int64_t start = ra - rb;
  if (auto axis = node.find_int("axis")) start = *axis < 0 ? *axis + ra : *axis;
  if (start < 0 || start + rb > ra)
    throw sdk::Error(std::string(op) + ": legacy broadcast of B " + shape_string(b) + " into A " +
                         shape_string(a) + " at axis " + std::to_string(start) + " is out of range",
                     LOOM_STATUS_INVALID_ARGUMENT);
  Shape out(a.size(), 1);
  for (int64_t i = 0; i < rb; ++i) out[start + i] = b[i];
  return out;
}

inline BinaryShapes binary_shapes(const sdk::ConstTensor& a, const sdk::ConstTensor& b,
                                  const sdk::Node& node, std::string_view op) {
  BinaryShapes s{a.shape(), b.shape(), {}};
  if (node.opset() < 7 && node.attr_int("broadcast", 0) != 0) s.b = legacy_broadcast_shape(s.a, s.b, node, op);
  s.out = broadcast_shape({s.a, s.b}, op);
  return s;
}

[[noreturn]] inline void fail_type_mismatch(std::string_view op, int32_t a, int32_t b) {
  throw sdk::Error(std::string(op) + ": input element types differ (" + sdk::dtype_name(a) + " vs " +
                       sdk::dtype_name(b) + ")",
                   LOOM_STATUS_INVALID_ARGUMENT);
}

// Applies `op(a, b)` (on compute_t values) over the broadcast of inputs 0 and
// 1, which must have the same element type. The output is T, or bool when
// kBoolOut.
template <class List, bool kBoolOut, class Op>
void binary(sdk::KernelContext& ctx, std::string_view name, Op op) {
  const sdk::ConstTensor a = ctx.required_input(0), b = ctx.required_input(1);
  if (a.dtype() != b.dtype()) fail_type_mismatch(name, a.dtype(), b.dtype());
  const BinaryShapes s = binary_shapes(a, b, ctx.node(), name);
  dispatch<List>(a.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    using Out = std::conditional_t<kBoolOut, bool, T>;
    using C = compute_t<T>;
    sdk::Tensor out = ctx.output(0, s.out, sdk::DTypeOf<Out>::value);
    if (element_count(s.out) == 0) return;
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    Out* po = out.template mutable_data<Out>();
    for_each_broadcast(s.out, {s.a, s.b}, [&](int64_t i, const int64_t* off) {
      po[i] = static_cast<Out>(op(static_cast<C>(pa[off[0]]), static_cast<C>(pb[off[1]])));
    });
  });
}

// Applies `op(x)` (on compute_t values) element-wise; output type T, or bool
// when kBoolOut.
template <class List, bool kBoolOut, class Op>
void unary(sdk::KernelContext& ctx, std::string_view name, Op op) {
  const sdk::ConstTensor x = ctx.required_input(0);
  dispatch<List>(x.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    using Out = std::conditional_t<kBoolOut, bool, T>;
    using C = compute_t<T>;
    sdk::Tensor out = ctx.output(0, x.shape(), sdk::DTypeOf<Out>::value);
    const int64_t n = x.size();
    if (n == 0) return;
    const T* px = x.data<T>();
    Out* py = out.template mutable_data<Out>();
    for (int64_t i = 0; i < n; ++i) py[i] = static_cast<Out>(op(static_cast<C>(px[i])));
  });
}

}  // namespace loom::reference
