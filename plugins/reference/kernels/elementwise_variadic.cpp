// Variadic element-wise kernels (Sum, Mean, Max, Min over 1..N broadcast
// inputs), Where and Clip.
#include <limits>
#include <vector>

#include "common/elementwise_helpers.h"
#include "kernels/elementwise_internal.h"

namespace loom::reference {
namespace {

using sdk::KernelContext;

// Folds `combine` over all inputs (broadcast together) and writes
// finish(acc, input_count).
template <class List, class Combine, class Finish>
void variadic(KernelContext& ctx, std::string_view name, Combine combine, Finish finish) {
  const size_t n = ctx.input_count();
  if (n == 0) sdk::fail_invalid(std::string(name) + ": needs at least one input");
  std::vector<sdk::ConstTensor> ins;
  std::vector<Shape> shapes;
  for (size_t k = 0; k < n; ++k) {
    ins.push_back(ctx.required_input(k));
    shapes.push_back(ins.back().shape());
    if (ins.back().dtype() != ins[0].dtype()) fail_type_mismatch(name, ins[0].dtype(), ins.back().dtype());
  }
  const Shape out_shape = broadcast_shape(shapes, name);
  dispatch<List>(ins[0].dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    sdk::Tensor out = ctx.output(0, out_shape, ins[0].dtype());
    if (element_count(out_shape) == 0) return;
    std::vector<const T*> ptrs;
    for (const auto& t : ins) ptrs.push_back(t.template data<T>());
    T* po = out.template mutable_data<T>();
    for_each_broadcast(out_shape, shapes, [&](int64_t i, const int64_t* off) {
      C acc = static_cast<C>(ptrs[0][off[0]]);
      for (size_t k = 1; k < n; ++k) acc = combine(acc, static_cast<C>(ptrs[k][off[k]]));
      po[i] = static_cast<T>(finish(acc, n));
    });
  });
}

constexpr auto kKeep = [](auto acc, size_t) { return acc; };

void sum(KernelContext& ctx) {
  variadic<FloatTypes>(ctx, "Sum", [](auto a, auto b) { return a + b; }, kKeep);
}
void mean(KernelContext& ctx) {
  variadic<FloatTypes>(ctx, "Mean", [](auto a, auto b) { return a + b; },
                       [](auto acc, size_t n) { return acc / static_cast<decltype(acc)>(n); });
}
// NaN propagates, as in numpy.maximum / numpy.minimum.
void max_kernel(KernelContext& ctx) {
  variadic<NumericTypes>(ctx, "Max", [](auto a, auto b) { return is_nan_value(a) || a >= b ? a : b; }, kKeep);
}
void min_kernel(KernelContext& ctx) {
  variadic<NumericTypes>(ctx, "Min", [](auto a, auto b) { return is_nan_value(a) || a <= b ? a : b; }, kKeep);
}

void where(KernelContext& ctx) {
  const sdk::ConstTensor cond = ctx.required_input(0), x = ctx.required_input(1), y = ctx.required_input(2);
  if (cond.dtype() != LOOM_DTYPE_BOOL)
    sdk::fail_invalid("Where: condition must be bool, got " + sdk::dtype_name(cond.dtype()));
  if (x.dtype() != y.dtype()) fail_type_mismatch("Where", x.dtype(), y.dtype());
  const std::vector<Shape> shapes{cond.shape(), x.shape(), y.shape()};
  const Shape out_shape = broadcast_shape(shapes, "Where");
  sdk::Tensor out = ctx.output(0, out_shape, x.dtype());
  if (element_count(out_shape) == 0) return;
  const bool* pc = cond.data<bool>();
  if (x.dtype() == LOOM_DTYPE_STRING) {
    for_each_broadcast(out_shape, shapes, [&](int64_t i, const int64_t* off) {
      out.set_string(i, pc[off[0]] ? x.string_at(off[1]) : y.string_at(off[2]));
    });
    return;
  }
  dispatch<PodTypes>(x.dtype(), "Where", [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data<T>();
    const T* py = y.data<T>();
    T* po = out.template mutable_data<T>();
    for_each_broadcast(out_shape, shapes, [&](int64_t i, const int64_t* off) {
      po[i] = pc[off[0]] ? px[off[1]] : py[off[2]];
    });
  });
}

// Clip: bounds are attributes before opset 11, optional scalar inputs after.
// min > max yields max everywhere (numpy.clip); NaN passes through.
void clip(KernelContext& ctx) {
  const sdk::ConstTensor x = ctx.required_input(0);
  const bool legacy = ctx.node().opset() < 11;
  dispatch<NumericTypes>(x.dtype(), "Clip", [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    C lo = std::numeric_limits<C>::lowest(), hi = std::numeric_limits<C>::max();
    if (legacy) {
      // The attributes' schema defaults are float's limits, even for double.
      lo = convert_value<C>(ctx.node().attr_float("min", std::numeric_limits<float>::lowest()));
      hi = convert_value<C>(ctx.node().attr_float("max", std::numeric_limits<float>::max()));
    } else {
      auto bound = [&](size_t i, const char* what, C& dst) {
        const sdk::ConstTensor b = ctx.input(i);
        if (!b.exists()) return;
        if (b.dtype() != x.dtype()) fail_type_mismatch("Clip", x.dtype(), b.dtype());
        if (b.size() != 1) sdk::fail_invalid(std::string("Clip: '") + what + "' must be a scalar");
        dst = static_cast<C>(b.template data<T>()[0]);
      };
      bound(1, "min", lo);
      bound(2, "max", hi);
    }
    sdk::Tensor out = ctx.output(0, x.shape(), x.dtype());
    const int64_t n = x.size();
    if (n == 0) return;
    const T* px = x.data<T>();
    T* po = out.template mutable_data<T>();
    for (int64_t i = 0; i < n; ++i) {
      C v = static_cast<C>(px[i]);
      if (v < lo) v = lo;
      if (v > hi) v = hi;
      po[i] = static_cast<T>(v);
    }
  });
}

}  // namespace

void register_elementwise_variadic_kernels(sdk::KernelRegistry& r) {
  constexpr int kEnd = LOOM_OPSET_OPEN_END;
  r.add("", "Sum", 1, kEnd, sum);
  r.add("", "Mean", 1, kEnd, mean);
  r.add("", "Max", 1, kEnd, max_kernel);
  r.add("", "Min", 1, kEnd, min_kernel);
  r.add("", "Where", 9, kEnd, where);
  r.add("", "Clip", 1, kEnd, clip);
}

}  // namespace loom::reference
