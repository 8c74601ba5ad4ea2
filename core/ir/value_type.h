// Static type of a graph value as known after shape inference.
#pragma once

#include <string>
#include <vector>

#include "loom/session.h"  // DimInfo
#include "loom/tensor.h"
#include "loom/value.h"

namespace loom::ir {

// What a value holds (the public enum, shared with ValueInfo).
using loom::ValueKind;

struct ValueType {
  ValueKind kind = ValueKind::kTensor;
  DType dtype = DType::kUndefined;  // element type (of the tensor, or of the sequence's tensors)
  bool has_shape = false;           // rank known
  std::vector<DimInfo> dims;
  // kMap, and kSequence of maps: the key type (dtype is the values').
  DType key_dtype = DType::kUndefined;
  // The shape is the model file's declaration (a graph output or a
  // value_info), or derived from one: run-time values that contradict it may
  // be the file's mistake, which ONNX Runtime tolerates with a warning.
  bool declared = false;

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

// The type of a constant: its element type and its dims, all known.
inline ValueType tensor_type(const Tensor& t) {
  ValueType vt;
  vt.dtype = t.dtype();
  vt.has_shape = true;
  for (int64_t d : t.dims()) vt.dims.push_back(DimInfo{d, ""});
  return vt;
}

}  // namespace loom::ir
