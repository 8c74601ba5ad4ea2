// Element-wise comparison and logical kernels: Equal, Less, Greater,
// LessOrEqual, GreaterOrEqual, And, Or, Xor, Not. All produce bool tensors;
// the binary ones broadcast (legacy broadcast attributes before opset 7).
#include "common/elementwise_helpers.h"
#include "kernels/elementwise_internal.h"

namespace loom::reference {
namespace {

using sdk::KernelContext;
using BoolTypes = TypeList<bool>;

// Equal-19 compares strings too (byte-wise).
void equal(KernelContext& ctx) {
  const sdk::ConstTensor a = ctx.required_input(0), b = ctx.required_input(1);
  if (a.dtype() != LOOM_DTYPE_STRING) {
    binary<PodTypes, true>(ctx, "Equal", [](auto x, auto y) { return x == y; });
    return;
  }
  if (b.dtype() != LOOM_DTYPE_STRING) sdk::fail_invalid("Equal: a string tensor compared with " + sdk::dtype_name(b.dtype()));
  const Shape out_shape = broadcast_shape({a.shape(), b.shape()}, "Equal");
  sdk::Tensor out = ctx.output(0, out_shape, LOOM_DTYPE_BOOL);
  if (out.size() == 0) return;
  bool* p = out.mutable_data<bool>();
  for_each_broadcast(out_shape, {a.shape(), b.shape()},
                     [&](int64_t i, const int64_t* off) { p[i] = a.string_at(off[0]) == b.string_at(off[1]); });
}
void less(KernelContext& ctx) { binary<NumericTypes, true>(ctx, "Less", [](auto a, auto b) { return a < b; }); }
void greater(KernelContext& ctx) {
  binary<NumericTypes, true>(ctx, "Greater", [](auto a, auto b) { return a > b; });
}
void less_or_equal(KernelContext& ctx) {
  binary<NumericTypes, true>(ctx, "LessOrEqual", [](auto a, auto b) { return a <= b; });
}
void greater_or_equal(KernelContext& ctx) {
  binary<NumericTypes, true>(ctx, "GreaterOrEqual", [](auto a, auto b) { return a >= b; });
}
void logical_and(KernelContext& ctx) { binary<BoolTypes, true>(ctx, "And", [](bool a, bool b) { return a && b; }); }
void logical_or(KernelContext& ctx) { binary<BoolTypes, true>(ctx, "Or", [](bool a, bool b) { return a || b; }); }
void logical_xor(KernelContext& ctx) { binary<BoolTypes, true>(ctx, "Xor", [](bool a, bool b) { return a != b; }); }
void logical_not(KernelContext& ctx) { unary<BoolTypes, true>(ctx, "Not", [](bool a) { return !a; }); }

}  // namespace

void register_elementwise_logic_kernels(sdk::KernelRegistry& r) {
  constexpr int kEnd = LOOM_OPSET_OPEN_END;
  r.add("", "Equal", 1, kEnd, equal);
  r.add("", "Less", 1, kEnd, less);
  r.add("", "Greater", 1, kEnd, greater);
  r.add("", "LessOrEqual", 12, kEnd, less_or_equal);
  r.add("", "GreaterOrEqual", 12, kEnd, greater_or_equal);
  r.add("", "And", 1, kEnd, logical_and);
  r.add("", "Or", 1, kEnd, logical_or);
  r.add("", "Xor", 1, kEnd, logical_xor);
  r.add("", "Not", 1, kEnd, logical_not);
}

}  // namespace loom::reference
