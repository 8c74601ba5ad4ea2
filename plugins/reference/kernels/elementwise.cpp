// Element-wise kernels: unary math and activations, broadcasting binary ops,
// variadic ops, Where, Clip, Cast.
#include <cmath>

#include "common/broadcast.h"
#include "common/dispatch.h"
#include "kernel_families.h"

namespace loom::reference {
namespace {

using sdk::KernelContext;

// Applies `op(a, b)` over the broadcast of inputs 0 and 1; Out is the output
// element type (T for arithmetic, bool for comparisons).
template <class List, bool kBoolOut, class Op>
void binary(KernelContext& ctx, std::string_view name, Op op) {
  const sdk::ConstTensor a = ctx.required_input(0), b = ctx.required_input(1);
  if (a.dtype() != b.dtype()) sdk::fail_invalid(std::string(name) + ": input types differ");
  const Shape sa = a.shape(), sb = b.shape();
  const Shape out_shape = broadcast_shape({sa, sb}, name);
  dispatch<List>(a.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    using Out = std::conditional_t<kBoolOut, bool, T>;
    using C = compute_t<T>;
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    Out* po = ctx.output(0, out_shape).template mutable_data<Out>();
    for_each_broadcast(out_shape, {sa, sb}, [&](int64_t i, const int64_t* off) {
      po[i] = static_cast<Out>(op(static_cast<C>(pa[off[0]]), static_cast<C>(pb[off[1]])));
    });
  });
}

template <class List, class Op>
void unary(KernelContext& ctx, std::string_view name, Op op) {
  const sdk::ConstTensor x = ctx.required_input(0);
  dispatch<List>(x.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    const T* px = x.data<T>();
    T* py = ctx.output(0, x.shape()).template mutable_data<T>();
    for (int64_t i = 0, n = x.size(); i < n; ++i) py[i] = static_cast<T>(op(static_cast<C>(px[i])));
  });
}

void add(KernelContext& ctx) { binary<NumericTypes, false>(ctx, "Add", [](auto a, auto b) { return a + b; }); }
void relu(KernelContext& ctx) {
  unary<SignedNumericTypes>(ctx, "Relu", [](auto x) { return x > decltype(x)(0) ? x : decltype(x)(0); });
}

}  // namespace

void register_elementwise_kernels(sdk::KernelRegistry& r) {
  r.add("", "Add", 7, LOOM_OPSET_OPEN_END, add);
  r.add("", "Relu", 6, LOOM_OPSET_OPEN_END, relu);
}

}  // namespace loom::reference
