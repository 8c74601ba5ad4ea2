// Loom plugin SDK: values of any kind (tensor, sequence of tensors, empty
// optional). ConstValue is a non-owning view; OwnedValue owns a value made by
// the host and releases it unless it is handed on.
#pragma once

#include <utility>
#include <vector>

#include "loom/sdk/host.h"
#include "loom/sdk/tensor.h"

namespace loom::sdk {

class ConstValue {
 public:
  ConstValue() = default;
  explicit ConstValue(const LOOM_Value* v) : v_(v) {}
  const LOOM_Value* raw() const { return v_; }
  bool exists() const { return v_ != nullptr; }
  int32_t kind() const { return v_ ? host().value_kind(v_) : LOOM_VALUE_NONE; }
  bool is_none() const { return kind() == LOOM_VALUE_NONE; }
  bool is_tensor() const { return kind() == LOOM_VALUE_TENSOR; }
  bool is_sequence() const { return kind() == LOOM_VALUE_SEQUENCE; }
  // Throws INVALID_ARGUMENT unless this is a tensor.
  ConstTensor tensor() const {
    const LOOM_Tensor* t = v_ ? host().value_tensor(v_) : nullptr;
    if (t == nullptr) throw Error("expected a tensor value", LOOM_STATUS_INVALID_ARGUMENT);
    return ConstTensor(t);
  }
  int32_t sequence_dtype() const { return host().value_sequence_dtype(v_); }
  size_t sequence_length() const {
    if (!is_sequence()) throw Error("expected a sequence value", LOOM_STATUS_INVALID_ARGUMENT);
    return static_cast<size_t>(host().value_sequence_length(v_));
  }
  ConstValue at(size_t i) const {
    const LOOM_Value* e = host().value_sequence_at(v_, i);
    if (e == nullptr) throw Error("sequence index " + std::to_string(i) + " out of range", LOOM_STATUS_INVALID_ARGUMENT);
    return ConstValue(e);
  }

 private:
  const LOOM_Value* v_ = nullptr;
};

class OwnedValue {
 public:
  OwnedValue() = default;
  explicit OwnedValue(LOOM_Value* v) : v_(v) {}
  OwnedValue(OwnedValue&& o) noexcept : v_(std::exchange(o.v_, nullptr)) {}
  OwnedValue& operator=(OwnedValue&& o) noexcept {
    if (this != &o) {
      reset();
      v_ = std::exchange(o.v_, nullptr);
    }
    return *this;
  }
  OwnedValue(const OwnedValue&) = delete;
  OwnedValue& operator=(const OwnedValue&) = delete;
  ~OwnedValue() { reset(); }

  static OwnedValue tensor(int32_t dtype, const std::vector<int64_t>& dims) {
    return checked(host().value_create_tensor(dtype, dims.data(), dims.size()), "tensor value");
  }
  static OwnedValue sequence(int32_t elem_dtype) {
    return checked(host().value_create_sequence(elem_dtype), "sequence value");
  }
  static OwnedValue none() { return checked(host().value_create_none(), "empty optional"); }
  static OwnedValue clone(ConstValue v) { return checked(host().value_clone(v.raw()), "copy of a value"); }

  ConstValue view() const { return ConstValue(v_); }
  Tensor mutable_tensor() const {
    LOOM_Tensor* t = host().value_mutable_tensor(v_);
    if (t == nullptr) throw Error("expected a tensor value", LOOM_STATUS_INVALID_ARGUMENT);
    return Tensor(t);
  }
  void append(OwnedValue element) { throw_if_error(host().value_sequence_append(v_, element.release())); }
  // Gives up ownership (the caller hands the value on).
  LOOM_Value* release() { return std::exchange(v_, nullptr); }
  void reset() {
    if (v_ != nullptr) host().value_release(std::exchange(v_, nullptr));
  }

 private:
  static OwnedValue checked(LOOM_Value* v, const char* what) {
    if (v == nullptr) throw Error(std::string("cannot create ") + what, LOOM_STATUS_OUT_OF_MEMORY);
    return OwnedValue(v);
  }
  LOOM_Value* v_ = nullptr;
};

}  // namespace loom::sdk
