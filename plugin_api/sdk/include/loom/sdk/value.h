// Loom plugin SDK: values of any kind (tensor, map, sequence of tensors or
// maps, empty optional). ConstValue is a non-owning view; OwnedValue owns a value made by
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
  bool is_map() const { return kind() == LOOM_VALUE_MAP; }
  // A map's keys / values (1-D tensors of one length); throws
  // INVALID_ARGUMENT unless this is a map, NOT_IMPLEMENTED on a 0.1 host.
  ConstTensor map_keys() const { return map_part(true); }
  ConstTensor map_values() const { return map_part(false); }
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
  ConstTensor map_part(bool keys) const {
    if (!LOOM_HAS_FIELD(&host(), LOOM_HostApi, value_map_values))
      throw Error("map values need a 0.2 host", LOOM_STATUS_NOT_IMPLEMENTED);
    if (!is_map()) throw Error("expected a map value", LOOM_STATUS_INVALID_ARGUMENT);
    const LOOM_Value* part = keys ? host().value_map_keys(v_) : host().value_map_values(v_);
    return ConstValue(part).tensor();
  }
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
  // A map of `keys` (1-D int64 or string) to `values` (1-D, same length).
  static OwnedValue map(OwnedValue keys, OwnedValue values) {
    if (!LOOM_HAS_FIELD(&host(), LOOM_HostApi, value_create_map))
      throw Error("map values need a 0.2 host", LOOM_STATUS_NOT_IMPLEMENTED);
    LOOM_Value* out = nullptr;
    throw_if_error(host().value_create_map(keys.release(), values.release(), &out));
    return checked(out, "map value");
  }
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
