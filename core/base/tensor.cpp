#include "loom/tensor.h"

#include <new>
#include <stdexcept>
#include <limits>

namespace loom {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::kFloat: case DType::kInt32: case DType::kUint32: return 4;
    case DType::kDouble: case DType::kInt64: case DType::kUint64: case DType::kComplex64: return 8;
    case DType::kComplex128: return 16;
    case DType::kInt16: case DType::kUint16: case DType::kFloat16: case DType::kBFloat16: return 2;
    case DType::kInt8: case DType::kUint8: case DType::kBool: return 1;
    case DType::kFloat8E4M3FN: case DType::kFloat8E4M3FNUZ: case DType::kFloat8E5M2: case DType::kFloat8E5M2FNUZ:
    case DType::kUint4: case DType::kInt4: case DType::kFloat4E2M1: case DType::kFloat8E8M0: case DType::kUint2:
    case DType::kInt2: return 1;  // unpacked: one element per byte
    case DType::kString: case DType::kUndefined: return 0;
  }
  return 0;
}

std::string dtype_name(DType t) {
  switch (t) {
    case DType::kFloat: return "float";
    case DType::kUint8: return "uint8";
    case DType::kInt8: return "int8";
    case DType::kUint16: return "uint16";
    case DType::kInt16: return "int16";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kString: return "string";
    case DType::kBool: return "bool";
    case DType::kFloat16: return "float16";
    case DType::kDouble: return "double";
    case DType::kUint32: return "uint32";
    case DType::kUint64: return "uint64";
    case DType::kComplex64: return "complex64";
    case DType::kComplex128: return "complex128";
    case DType::kBFloat16: return "bfloat16";
    case DType::kFloat8E4M3FN: return "float8e4m3fn";
    case DType::kFloat8E4M3FNUZ: return "float8e4m3fnuz";
    case DType::kFloat8E5M2: return "float8e5m2";
    case DType::kFloat8E5M2FNUZ: return "float8e5m2fnuz";
    case DType::kUint4: return "uint4";
    case DType::kInt4: return "int4";
    case DType::kFloat4E2M1: return "float4e2m1";
    case DType::kFloat8E8M0: return "float8e8m0";
    case DType::kUint2: return "uint2";
    case DType::kInt2: return "int2";
    case DType::kUndefined: break;
  }
  return "undefined(" + std::to_string(static_cast<int>(t)) + ")";
}

std::string dims_string(const Dims& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

Status check_bool_values(const Tensor& t) { return check_bool_values(t.dtype(), t.data(), t.element_count()); }

Status check_bool_values(DType dtype, const void* data, int64_t count) {
  if (dtype != DType::kBool) return Status::ok();
  const uint8_t* bytes = static_cast<const uint8_t*>(data);
  for (int64_t i = 0; i < count; ++i)
    if (bytes[i] > 1)
      return invalid_argument("bool element " + std::to_string(i) + " holds byte value " + std::to_string(bytes[i]) +
                              " (bools must be 0 or 1)");
  return Status::ok();
}

Expected<int64_t> checked_element_count(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return invalid_argument("negative dimension in shape " + dims_string(dims));
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d)
      return invalid_argument("element count of shape " + dims_string(dims) + " overflows int64");
    n *= d;
  }
  return n;
}

Expected<Tensor> Tensor::zeros(DType dtype, Dims dims) {
  // A size no allocator can give (a hostile shape) is an error, not an
  // exception escaping through plugin frames.
  const std::string what = "cannot allocate a " + dtype_name(dtype) + " tensor of shape " + dims_string(dims);
  try {
    return zeros_unchecked(dtype, std::move(dims));
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kOutOfMemory, what);
  } catch (const std::length_error&) {
    return Status(StatusCode::kOutOfMemory, what);
  }
}

Expected<Tensor> Tensor::zeros_unchecked(DType dtype, Dims dims) {
  LOOM_ASSIGN_OR_RETURN(int64_t count, checked_element_count(dims));
  Tensor t;
  t.dtype_ = dtype;
  t.dims_ = std::move(dims);
  t.count_ = count;
  if (dtype == DType::kString) {
    t.strings_ = std::make_shared<std::vector<std::string>>(static_cast<size_t>(count));
    return t;
  }
  const size_t esize = dtype_size(dtype);
  if (esize == 0) return invalid_argument("cannot create a tensor of type " + dtype_name(dtype));
  if (static_cast<uint64_t>(count) > std::numeric_limits<uint64_t>::max() / esize)
    return invalid_argument("byte size of shape " + dims_string(t.dims_) + " overflows");
  auto bytes = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(count) * esize);
  t.data_ = std::shared_ptr<uint8_t>(bytes, bytes->data());
  t.byte_size_ = bytes->size();
  return t;
}

Expected<Tensor> Tensor::sized(DType dtype, Dims dims, size_t size) {
  if (dtype == DType::kString) return invalid_argument("string tensors are not built from bytes");
  const size_t esize = dtype_size(dtype);
  if (esize == 0) return invalid_argument("cannot create a tensor of type " + dtype_name(dtype));
  LOOM_ASSIGN_OR_RETURN(int64_t count, checked_element_count(dims));
  if (static_cast<uint64_t>(count) > std::numeric_limits<uint64_t>::max() / esize ||
      size != static_cast<size_t>(count) * esize)
    return invalid_argument("tensor of type " + dtype_name(dtype) + " and shape " + dims_string(dims) + " needs " +
                            std::to_string(static_cast<uint64_t>(count) * esize) + " bytes, got " + std::to_string(size));
  Tensor t;
  t.dtype_ = dtype;
  t.dims_ = std::move(dims);
  t.count_ = count;
  t.byte_size_ = size;
  return t;
}

Expected<Tensor> Tensor::from_bytes(DType dtype, Dims dims, const void* bytes, size_t size) {
  LOOM_ASSIGN_OR_RETURN(Tensor t, sized(dtype, std::move(dims), size));
  // Built from the bytes directly: zero-filling first would touch every page twice.
  const auto* p = static_cast<const uint8_t*>(bytes);
  auto owner = std::make_shared<std::vector<uint8_t>>(p, p + size);
  t.data_ = std::shared_ptr<uint8_t>(owner, owner->data());
  return t;
}

Expected<Tensor> Tensor::adopt_bytes(DType dtype, Dims dims, std::string&& bytes) {
  LOOM_ASSIGN_OR_RETURN(Tensor t, sized(dtype, std::move(dims), bytes.size()));
  auto owner = std::make_shared<std::string>(std::move(bytes));
  t.data_ = std::shared_ptr<uint8_t>(owner, reinterpret_cast<uint8_t*>(owner->data()));
  return t;
}

Tensor Tensor::from_strings(Dims dims, std::vector<std::string> values) {
  Tensor t;
  t.dtype_ = DType::kString;
  t.dims_ = std::move(dims);
  t.count_ = static_cast<int64_t>(values.size());
  t.strings_ = std::make_shared<std::vector<std::string>>(std::move(values));
  return t;
}

}  // namespace loom
