// Element-wise kernels, arithmetic part: broadcasting binary arithmetic (Add,
// Sub, Mul, Div, Pow, Mod, BitShift, PRelu). The rest of the family lives in
// elementwise_*.cpp and is registered from here.
//
// Opsets 1-6 of the binary ops used limited broadcasting driven by the
// `broadcast`/`axis` attributes; binary_shapes() maps that onto numpy
// broadcasting, so one kernel serves every version.
#include <cmath>
#include <vector>

#include "common/elementwise_helpers.h"
#include "kernel_families.h"
#include "kernels/elementwise_internal.h"

namespace loom::reference {
namespace {

using sdk::KernelContext;

template <class C>
C div_value(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    if (b == 0) throw sdk::Error("Div: integer division by zero", LOOM_STATUS_INVALID_ARGUMENT);
    if constexpr (std::is_signed_v<C>) {
      if (b == C(-1)) return sub_wrap(C(0), a);  // avoids INT_MIN / -1
    }
    return static_cast<C>(a / b);  // truncates toward zero, like C
  } else {
    return a / b;
  }
}

// fmod: sign of the dividend (C fmod). Otherwise: sign of the divisor
// (Python / numpy.mod).
template <class C>
C mod_value(C a, C b, bool fmod) {
  C r;
  if constexpr (std::is_integral_v<C>) {
    if (b == 0) throw sdk::Error("Mod: integer modulus by zero", LOOM_STATUS_INVALID_ARGUMENT);
    if constexpr (std::is_signed_v<C>) {
      if (b == C(-1)) return C(0);  // avoids INT_MIN % -1
    }
    r = static_cast<C>(a % b);
  } else {
    r = std::fmod(a, b);
  }
  if constexpr (std::is_signed_v<C> || std::is_floating_point_v<C>) {
    if (!fmod && r != C(0) && ((r < C(0)) != (b < C(0)))) r = static_cast<C>(r + b);
  }
  return r;
}

void add(KernelContext& ctx) { binary<NumericTypes, false>(ctx, "Add", [](auto a, auto b) { return add_wrap(a, b); }); }
void sub(KernelContext& ctx) { binary<NumericTypes, false>(ctx, "Sub", [](auto a, auto b) { return sub_wrap(a, b); }); }
void mul(KernelContext& ctx) { binary<NumericTypes, false>(ctx, "Mul", [](auto a, auto b) { return mul_wrap(a, b); }); }
void div(KernelContext& ctx) { binary<NumericTypes, false>(ctx, "Div", [](auto a, auto b) { return div_value(a, b); }); }

void mod(KernelContext& ctx) {
  const bool fmod = ctx.node().attr_int("fmod", 0) != 0;
  binary<NumericTypes, false>(ctx, "Mod", [fmod](auto a, auto b) { return mod_value(a, b, fmod); });
}

void bit_shift(KernelContext& ctx) {
  const std::string direction = ctx.node().attr_string("direction", "");
  if (direction != "LEFT" && direction != "RIGHT")
    sdk::fail_invalid("BitShift: attribute 'direction' must be LEFT or RIGHT, got '" + direction + "'");
  const bool left = direction == "LEFT";
  binary<UnsignedIntTypes, false>(ctx, "BitShift", [left](auto a, auto b) {
    using C = decltype(a);
    using W = wrap_t<C>;
    if (b >= static_cast<C>(sizeof(C) * 8)) return C(0);
    return left ? static_cast<C>(static_cast<W>(a) << b) : static_cast<C>(a >> b);
  });
}

// Integer power by squaring, wrapping on overflow like numpy.
template <class C>
C int_pow(C base, uint64_t e) {
  C result = 1;
  while (e != 0) {
    if (e & 1u) result = mul_wrap(result, base);
    e >>= 1;
    if (e != 0) base = mul_wrap(base, base);
  }
  return result;
}

template <class T>
T pow_value(compute_t<T> a, double e) {
  using C = compute_t<T>;
  if constexpr (std::is_integral_v<C>) {
    if (std::floor(e) == e) {
      if (e >= 0) return int_pow<C>(a, float_to_int<uint64_t>(e));
      // Negative integral exponent: what truncating 1 / a^n gives.
      if (a == 1) return 1;
      if constexpr (std::is_signed_v<C>) {
        if (a == -1) return std::fmod(e, 2.0) == 0 ? C(1) : C(-1);
      }
      if (a == 0) return float_to_int<C>(std::pow(0.0, e));  // inf -> indefinite
      return 0;
    }
    return float_to_int<C>(std::pow(static_cast<double>(a), e));
  } else {
    return static_cast<T>(std::pow(static_cast<double>(a), e));
  }
}

using PowBaseTypes = TypeList<float, double, Float16, BFloat16, int32_t, int64_t>;

// Pow: since opset 12 the exponent may have another type than the base; the
// output has the base's type. The exponent is read as double.
void pow_kernel(KernelContext& ctx) {
  const sdk::ConstTensor a = ctx.required_input(0), b = ctx.required_input(1);
  const BinaryShapes s = binary_shapes(a, b, ctx.node(), "Pow");
  std::vector<double> e(static_cast<size_t>(b.size()));
  if (!e.empty()) {
    dispatch<NumericTypes>(b.dtype(), "Pow exponent", [&](auto tag) {
      using E = decltype(tag);
      const E* p = b.data<E>();
      for (size_t i = 0; i < e.size(); ++i) e[i] = static_cast<double>(static_cast<compute_t<E>>(p[i]));
    });
  }
  dispatch<PowBaseTypes>(a.dtype(), "Pow", [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    sdk::Tensor out = ctx.output(0, s.out, a.dtype());
    if (element_count(s.out) == 0) return;
    const T* pa = a.data<T>();
    T* po = out.template mutable_data<T>();
    for_each_broadcast(s.out, {s.a, s.b}, [&](int64_t i, const int64_t* off) {
      po[i] = pow_value<T>(static_cast<C>(pa[off[0]]), e[off[1]]);
    });
  });
}

// PRelu: slope is unidirectionally broadcast to X (opset 7+). Opsets 1-6
// used Caffe-style slopes: one value, or one per channel (axis 1).
void prelu(KernelContext& ctx) {
  const sdk::ConstTensor x = ctx.required_input(0), slope = ctx.required_input(1);
  if (x.dtype() != slope.dtype()) fail_type_mismatch("PRelu", x.dtype(), slope.dtype());
  const Shape sx = x.shape();
  Shape ss = slope.shape();
  if (ctx.node().opset() < 7) {
    if (slope.size() == 1) {
      ss = {};
    } else if (ss.size() == 1 && sx.size() >= 2 && ss[0] == sx[1]) {
      ss = Shape(sx.size() - 1, 1);
      ss[0] = sx[1];
    }
  }
  const Shape out_shape = broadcast_shape({sx, ss}, "PRelu");
  if (out_shape != sx)
    sdk::fail_invalid("PRelu: slope shape " + shape_string(slope.shape()) +
                      " cannot be broadcast to input shape " + shape_string(sx));
  dispatch<NumericTypes>(x.dtype(), "PRelu", [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    sdk::Tensor out = ctx.output(0, out_shape, x.dtype());
    if (element_count(out_shape) == 0) return;
    const T* px = x.data<T>();
    const T* ps = slope.data<T>();
    T* po = out.template mutable_data<T>();
    for_each_broadcast(out_shape, {sx, ss}, [&](int64_t i, const int64_t* off) {
      const C v = static_cast<C>(px[off[0]]);
      po[i] = v < C(0) ? static_cast<T>(mul_wrap(v, static_cast<C>(ps[off[1]]))) : px[off[0]];
    });
  });
}

}  // namespace

void register_elementwise_kernels(sdk::KernelRegistry& r) {
  constexpr int kEnd = LOOM_OPSET_OPEN_END;
  // Input 0 the size of the output is not broadcast, so element i reads only
  // its element i before writing it: the output may take over its buffer.
  r.add("", "Add", 1, kEnd, add).output_may_reuse_input(0, 0);
  r.add("", "Sub", 1, kEnd, sub).output_may_reuse_input(0, 0);
  r.add("", "Mul", 1, kEnd, mul).output_may_reuse_input(0, 0);
  r.add("", "Div", 1, kEnd, div).output_may_reuse_input(0, 0);
  r.add("", "Pow", 1, kEnd, pow_kernel);
  r.add("", "Mod", 10, kEnd, mod);
  r.add("", "BitShift", 11, kEnd, bit_shift);
  r.add("", "PRelu", 1, kEnd, prelu);
  register_elementwise_logic_kernels(r);
  register_elementwise_unary_kernels(r);
  register_elementwise_variadic_kernels(r);
  register_elementwise_cast_kernels(r);
  register_elementwise_recent_kernels(r);
}

}  // namespace loom::reference
