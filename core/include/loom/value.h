// A model input or output of any kind: a tensor, a map, a sequence of
// tensors or of maps, or nothing (an empty optional).
#pragma once

#include <utility>
#include <vector>

#include "loom/tensor.h"

namespace loom {

// The declared kind of a model value (ValueInfo::kind). kMap: ONNX's map
// (ai.onnx.ml); a sequence of maps is kSequence with a key type.
enum class ValueKind { kTensor, kSequence, kOptional, kUnknown, kMap };

class Value {
 public:
  enum class Kind { kNone, kTensor, kSequence, kMap };

  Value() = default;  // an empty optional
  Value(Tensor t) : kind_(Kind::kTensor), tensor_(std::move(t)) {}  // NOLINT: implicit on purpose
  static Value none() { return Value(); }
  static Value sequence(DType elem_dtype, std::vector<Tensor> elements) {
    Value v;
    v.kind_ = Kind::kSequence;
    v.elem_dtype_ = elem_dtype;
    v.elements_ = std::move(elements);
    return v;
  }
  // ONNX's map (ai.onnx.ml): keys (1-D int64 or string) to values (1-D, the
  // same length), pair i being keys[i] -> values[i]. Checked where it is
  // used (a session input, a kernel's output).
  static Value map(Tensor keys, Tensor values) {
    Value v;
    v.kind_ = Kind::kMap;
    v.tensor_ = std::move(keys);
    v.elem_dtype_ = values.dtype();
    v.elements_ = {std::move(values)};
    return v;
  }
  // A sequence of maps (ZipMap's output); sequence_dtype() is the maps'
  // value type, elements() is empty, maps() holds them.
  static Value sequence_of_maps(DType value_dtype, std::vector<Value> maps) {
    Value v;
    v.kind_ = Kind::kSequence;
    v.elem_dtype_ = value_dtype;
    v.maps_ = std::move(maps);
    return v;
  }

  Kind kind() const { return kind_; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_tensor() const { return kind_ == Kind::kTensor; }
  bool is_sequence() const { return kind_ == Kind::kSequence; }
  bool is_map() const { return kind_ == Kind::kMap; }
  const Tensor& tensor() const { return tensor_; }
  DType sequence_dtype() const { return elem_dtype_; }
  const std::vector<Tensor>& elements() const { return elements_; }
  // A map's keys and values.
  const Tensor& map_keys() const { return tensor_; }
  const Tensor& map_values() const { return elements_.at(0); }
  // A sequence of maps' maps (each is_map()); empty for a sequence of tensors.
  const std::vector<Value>& maps() const { return maps_; }
  bool is_sequence_of_maps() const { return kind_ == Kind::kSequence && !maps_.empty(); }

 private:
  Kind kind_ = Kind::kNone;
  Tensor tensor_;
  DType elem_dtype_ = DType::kUndefined;
  std::vector<Tensor> elements_;
  std::vector<Value> maps_;
};

}  // namespace loom
