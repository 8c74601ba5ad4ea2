// A model input or output of any kind: a tensor, a sequence of tensors, or
// nothing (an empty optional).
#pragma once

#include <utility>
#include <vector>

#include "loom/tensor.h"

namespace loom {

// The declared kind of a model value (ValueInfo::kind).
enum class ValueKind { kTensor, kSequence, kOptional, kUnknown };

class Value {
 public:
  enum class Kind { kNone, kTensor, kSequence };

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

  Kind kind() const { return kind_; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_tensor() const { return kind_ == Kind::kTensor; }
  bool is_sequence() const { return kind_ == Kind::kSequence; }
  const Tensor& tensor() const { return tensor_; }
  DType sequence_dtype() const { return elem_dtype_; }
  const std::vector<Tensor>& elements() const { return elements_; }

 private:
  Kind kind_ = Kind::kNone;
  Tensor tensor_;
  DType elem_dtype_ = DType::kUndefined;
  std::vector<Tensor> elements_;
};

}  // namespace loom
