// A host tensor value: element type, shape and owned storage. Used for model
// inputs and outputs, initializers and constant folding.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "loom/status.h"

namespace loom {

// Element types; values are ONNX TensorProto.DataType's (and LOOM_DTYPE_*).
enum class DType : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUint32 = 12,
  kUint64 = 13,
  kComplex64 = 14,
  kComplex128 = 15,
  kBFloat16 = 16,
  // ONNX's newer element types (IR 9 and later). Loom keeps one element per
  // byte: the float8 / float8e8m0 code; float4e2m1's code in the low nibble;
  // int4 / int2 as a signed byte, uint4 / uint2 as an unsigned one (as
  // numpy's ml_dtypes). Files pack the sub-byte ones (onnx/sub_byte.h).
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  kUint4 = 21,
  kInt4 = 22,
  kFloat4E2M1 = 23,
  kFloat8E8M0 = 24,
  kUint2 = 25,
  kInt2 = 26,
};

// The largest DType value Loom knows.
constexpr int32_t kLastDType = 26;

// Bytes per element; 0 for strings and undefined.
size_t dtype_size(DType t);
std::string dtype_name(DType t);

using Dims = std::vector<int64_t>;

std::string dims_string(const Dims& dims);

// Element count of `dims`, or an error if a dim is negative or the count
// overflows int64.
Expected<int64_t> checked_element_count(const Dims& dims);

class Tensor;
// OK unless `t` is a BOOL tensor holding a byte other than 0 or 1: such
// bytes are not bools, and kernels reading them as bool would be undefined
// behaviour. The error names the first bad element.
Status check_bool_values(const Tensor& t);
// The same for `count` elements of type `dtype` at `data` (host memory;
// for bools the element count is the byte count).
Status check_bool_values(DType dtype, const void* data, int64_t count);

class Tensor {
 public:
  Tensor() = default;
  // Zero-filled tensor; fails on negative dims or overflow.
  // kOutOfMemory when the allocation fails.
  static Expected<Tensor> zeros(DType dtype, Dims dims);
  // Copies `bytes` (must be element_count * dtype_size bytes).
  static Expected<Tensor> from_bytes(DType dtype, Dims dims, const void* bytes, size_t size);
  // Takes `bytes` (must be element_count * dtype_size bytes) without a copy:
  // a model's weights come out of their protobuf strings this way.
  static Expected<Tensor> adopt_bytes(DType dtype, Dims dims, std::string&& bytes);
  static Tensor from_strings(Dims dims, std::vector<std::string> values);
  template <class T>
  static Tensor from_vector(DType dtype, Dims dims, const std::vector<T>& values) {
    return from_bytes(dtype, std::move(dims), values.data(), values.size() * sizeof(T)).value();
  }

  DType dtype() const { return dtype_; }
  const Dims& dims() const { return dims_; }
  int64_t element_count() const { return count_; }
  size_t byte_size() const { return byte_size_; }
  const void* data() const { return data_.get(); }
  void* mutable_data() { return data_.get(); }
  template <class T>
  const T* data_as() const { return static_cast<const T*>(data()); }
  template <class T>
  T* mutable_data_as() { return static_cast<T*>(mutable_data()); }
  const std::vector<std::string>& strings() const { return *strings_; }
  std::vector<std::string>& mutable_strings() { return *strings_; }
  bool is_string() const { return dtype_ == DType::kString; }

 private:
  static Expected<Tensor> zeros_unchecked(DType dtype, Dims dims);
  // Checks that `size` bytes hold a tensor of `dtype` and `dims`; returns
  // the tensor without its bytes.
  static Expected<Tensor> sized(DType dtype, Dims dims, size_t size);
  DType dtype_ = DType::kUndefined;
  Dims dims_;
  int64_t count_ = 0;
  // Shared so that copies of a Tensor are cheap; treat as immutable once
  // shared. An aliasing pointer: it owns whatever holds the bytes (a vector,
  // an adopted string) and points at the first byte.
  std::shared_ptr<uint8_t> data_;
  size_t byte_size_ = 0;
  std::shared_ptr<std::vector<std::string>> strings_;
};

}  // namespace loom
