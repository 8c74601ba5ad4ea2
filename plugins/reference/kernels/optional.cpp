// Optional kernels: Optional, OptionalHasElement, OptionalGetElement
// (opset 15+). An optional holding a value is that value itself on the host;
// an empty optional is a NONE value.
#include "kernel_families.h"
#include "kernels/flow_internal.h"

namespace loom::reference {
namespace {

using sdk::ConstValue;
using sdk::KernelContext;
using sdk::OwnedValue;

constexpr int kOpen = LOOM_OPSET_OPEN_END;

// Optional(x) wraps x; Optional() with a `type` attribute is empty.
void optional(KernelContext& ctx) {
  const ConstValue v = ctx.input_value(0);
  if (v.exists() && !v.is_none()) {
    ctx.set_output(0, OwnedValue::clone(v));
    return;
  }
  if (!v.exists() && !ctx.node().has_attr("type"))
    sdk::fail_invalid("Optional: needs an input or a 'type' attribute");
  ctx.set_output(0, OwnedValue::none());
}

// True when the input holds a value (opset 18 also allows a plain tensor or
// sequence, which holds one, and an omitted input, which does not).
void optional_has_element(KernelContext& ctx) {
  const ConstValue v = ctx.input_value(0);
  sdk::Tensor out = ctx.output(0, {}, LOOM_DTYPE_BOOL);
  out.mutable_data<bool>()[0] = v.exists() && !v.is_none();
}

// The value inside the optional; an empty optional is an error.
void optional_get_element(KernelContext& ctx) {
  const ConstValue v = ctx.input_value(0);
  if (!v.exists() || v.is_none()) sdk::fail_invalid("OptionalGetElement: the optional input is empty");
  ctx.set_output(0, OwnedValue::clone(v));
}

}  // namespace

void register_optional_kernels(sdk::KernelRegistry& r) {
  r.add("", "Optional", 15, kOpen, optional);
  r.add("", "OptionalHasElement", 15, kOpen, optional_has_element);
  r.add("", "OptionalGetElement", 15, kOpen, optional_get_element);
}

}  // namespace loom::reference
