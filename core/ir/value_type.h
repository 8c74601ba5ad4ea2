// Static type of a graph value as known after shape inference.
#pragma once

#include <string>
#include <vector>

#include "loom/session.h"  // DimInfo
#include "loom/tensor.h"

namespace loom::ir {

// What a value holds. Sequences and optionals are declared so that the IR can
// carry them; kernels for them arrive with the control-flow work.
enum class ValueKind { kTensor, kSequence, kOptional, kUnknown };

struct ValueType {
  ValueKind kind = ValueKind::kTensor;
  DType dtype = DType::kUndefined;  // element type (of the tensor, or of the sequence's tensors)
  bool has_shape = false;           // rank known
  std::vector<DimInfo> dims;

  // Concrete dims when every dim has a value; -1 entries otherwise.
  Dims known_dims() const {
    Dims d;
    for (const DimInfo& x : dims) d.push_back(x.value);
    return d;
  }
  bool fully_known() const {
    if (!has_shape) return false;
    for (const DimInfo& x : dims)
      if (x.value < 0) return false;
    return true;
  }
  std::string to_string() const;
};

}  // namespace loom::ir
