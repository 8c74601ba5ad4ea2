// When one static type of a value says more than another: shape passes
// replace a recorded type only by a more precise, non-contradicting one.
#pragma once

#include "ir/value_type.h"

namespace loom::ir {

// A symbol that names nothing: empty, or one ONNX inference invented
// ("unk__N") and that no other value shares on purpose.
inline bool anonymous_symbol(const std::string& s) { return s.empty() || s.rfind("unk__", 0) == 0; }

// `now` says strictly more than `before` and contradicts nothing in it:
// a dtype where there was none, a rank where there was none, a dim value
// where there was none, or a real symbol where there was an anonymous one.
inline bool more_precise(const ir::ValueType& now, const ir::ValueType& before) {
  if (now.kind != before.kind) return before.kind == ValueKind::kUnknown;
  if (now.dtype != before.dtype) {
    if (before.dtype != DType::kUndefined) return false;
    return now.dtype != DType::kUndefined;
  }
  if (!now.has_shape) return false;
  if (!before.has_shape) return true;
  if (now.dims.size() != before.dims.size()) return false;
  bool gained = false;
  for (size_t i = 0; i < now.dims.size(); ++i) {
    const DimInfo &n = now.dims[i], &b = before.dims[i];
    if (b.value >= 0) {
      if (n.value != b.value) return false;
      continue;
    }
    if (n.value >= 0) {
      gained = true;
    } else if (!anonymous_symbol(b.symbol)) {
      if (n.symbol != b.symbol) return false;
    } else if (!anonymous_symbol(n.symbol)) {
      gained = true;
    }
  }
  return gained;
}

}  // namespace loom::ir
