// Loom plugin SDK: typed views of host tensors. Views do not own anything;
// they are valid as long as the LOOM_Tensor they wrap (for kernel inputs and
// outputs: until compute returns).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "loom/sdk/dtype.h"
#include "loom/sdk/host.h"

namespace loom::sdk {

class ConstTensor {
 public:
  ConstTensor() = default;
  explicit ConstTensor(const LOOM_Tensor* t) : t_(t) {}

  bool exists() const { return t_ != nullptr; }
  const LOOM_Tensor* raw() const { return t_; }
  int32_t dtype() const { return host().tensor_dtype(t_); }
  size_t rank() const { return static_cast<size_t>(host().tensor_rank(t_)); }
  int64_t dim(size_t i) const { return host().tensor_dims(t_)[i]; }
  std::vector<int64_t> shape() const {
    const int64_t* d = host().tensor_dims(t_);
    return std::vector<int64_t>(d, d + rank());
  }
  int64_t size() const { return static_cast<int64_t>(host().tensor_element_count(t_)); }
  const void* raw_data() const { return host().tensor_data(t_); }

  // Typed element pointer; throws if T does not match the dtype.
  template <class T>
  const T* data() const {
    check_type<T>();
    return static_cast<const T*>(host().tensor_data(t_));
  }
  std::string_view string_at(int64_t i) const {
    return from_view(host().tensor_string_at(t_, static_cast<uint64_t>(i)));
  }
  // Reads every element converted to int64 (for shape-like inputs).
  std::vector<int64_t> to_int64_vector() const;

 protected:
  template <class T>
  void check_type() const {
    if (DTypeOf<T>::value != dtype())
      throw Error("tensor element type is " + dtype_name(dtype()) + ", kernel expected " +
                      dtype_name(DTypeOf<T>::value),
                  LOOM_STATUS_INVALID_ARGUMENT);
  }
  const LOOM_Tensor* t_ = nullptr;
};

class Tensor : public ConstTensor {
 public:
  Tensor() = default;
  explicit Tensor(LOOM_Tensor* t) : ConstTensor(t), mt_(t) {}
  LOOM_Tensor* raw_mutable() const { return mt_; }
  void* raw_mutable_data() const { return host().tensor_data(t_); }
  template <class T>
  T* mutable_data() const {
    check_type<T>();
    return static_cast<T*>(host().tensor_data(t_));
  }
  void set_string(int64_t i, std::string_view value) const {
    throw_if_error(host().tensor_set_string(mt_, static_cast<uint64_t>(i), to_view(value)));
  }

 private:
  LOOM_Tensor* mt_ = nullptr;
};

inline std::vector<int64_t> ConstTensor::to_int64_vector() const {
  std::vector<int64_t> out(static_cast<size_t>(size()));
  const void* p = raw_data();
  for (size_t i = 0; i < out.size(); ++i) {
    switch (dtype()) {
      case LOOM_DTYPE_INT64: out[i] = static_cast<const int64_t*>(p)[i]; break;
      case LOOM_DTYPE_INT32: out[i] = static_cast<const int32_t*>(p)[i]; break;
      case LOOM_DTYPE_INT16: out[i] = static_cast<const int16_t*>(p)[i]; break;
      case LOOM_DTYPE_INT8: out[i] = static_cast<const int8_t*>(p)[i]; break;
      case LOOM_DTYPE_UINT8: out[i] = static_cast<const uint8_t*>(p)[i]; break;
      case LOOM_DTYPE_UINT16: out[i] = static_cast<const uint16_t*>(p)[i]; break;
      case LOOM_DTYPE_UINT32: out[i] = static_cast<const uint32_t*>(p)[i]; break;
      case LOOM_DTYPE_UINT64: out[i] = static_cast<int64_t>(static_cast<const uint64_t*>(p)[i]); break;
      case LOOM_DTYPE_BOOL: out[i] = static_cast<const bool*>(p)[i]; break;
      case LOOM_DTYPE_FLOAT: out[i] = static_cast<int64_t>(static_cast<const float*>(p)[i]); break;
      case LOOM_DTYPE_DOUBLE: out[i] = static_cast<int64_t>(static_cast<const double*>(p)[i]); break;
      default:
        throw Error("cannot read " + dtype_name(dtype()) + " tensor as integers",
                    LOOM_STATUS_INVALID_ARGUMENT);
    }
  }
  return out;
}

}  // namespace loom::sdk
