// Host-side helpers of the data-movement kernel classes
// (kernels/movement_kernels.cpp, movement_layout_kernels.cpp,
// slicing_kernels.cpp, resize_kernels.cpp):
// launch error checks, device copies that skip an aliased buffer, shape
// operands read on the host, bit patterns of fill values, and the
// registration entry points of the files the family is split into.
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include "kernel_table.h"
#include "kernels/kernel_support.h"
#include "kernels/movement.h"

namespace loom::cuda {

void register_layout_kernels(KernelTable& table);
void register_slicing_kernels(KernelTable& table);
void register_resize_kernels(KernelTable& table);

// The product of dims[from, to), checked.
inline int64_t product(const std::vector<int64_t>& dims, size_t from, size_t to, const std::string& what) {
  int64_t n = 1;
  for (size_t d = from; d < to; ++d) n = sdk::checked_mul(n, dims[d], what);
  return n;
}

// Element `element` of a buffer of `element_size`-byte elements.
inline char* byte_at(void* base, int64_t element, size_t element_size) {
  return static_cast<char*>(base) + static_cast<size_t>(element) * element_size;
}
inline const char* byte_at(const void* base, int64_t element, size_t element_size) {
  return static_cast<const char*>(base) + static_cast<size_t>(element) * element_size;
}

// A launcher's result: cudaErrorInvalidValue is a type the kernel lacks.
inline void check_movement(cudaError_t e, const std::string& op, int32_t dtype) {
  if (e == cudaErrorInvalidValue)
    throw sdk::Error("cuda " + op + ": no kernel for " + sdk::dtype_name(dtype), LOOM_STATUS_NOT_IMPLEMENTED);
  check(e, (op + " launch").c_str());
}

inline std::string shape_text(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

[[noreturn]] inline void fail_op(const std::string& op, const std::string& why) {
  throw sdk::Error("cuda " + op + ": " + why, LOOM_STATUS_INVALID_ARGUMENT);
}

// Copies `bytes` device bytes from src to dst on the kernel's stream;
// nothing when they are the same buffer (the planner aliased the output
// with the input) or empty.
inline void copy_device(const sdk::KernelContext& ctx, void* dst, const void* src, size_t bytes, const std::string& op) {
  if (bytes == 0 || dst == src) return;
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_of(ctx)), (op + " copy").c_str());
}

// Output 0 with `dims`, holding input 0's bytes (Reshape and its kin).
inline void copy_as(const sdk::KernelContext& ctx, const std::vector<int64_t>& dims, const std::string& op) {
  sdk::ConstTensor x = ctx.required_input(0);
  if (sdk::checked_element_count(dims, "cuda " + op + " output") != x.size())
    fail_op(op, "cannot reshape " + shape_text(x.shape()) + " to " + shape_text(dims));
  sdk::Tensor y = ctx.output(0, dims, x.dtype());
  copy_device(ctx, y.raw_mutable_data(), x.raw_data(), static_cast<size_t>(x.size()) * element_bytes(x.dtype()), op);
}

// Input `input` (empty view when absent), checked to be in host memory
// (declared with KernelTable::input_on_host).
inline sdk::ConstTensor host_input(const sdk::KernelContext& ctx, size_t input) {
  sdk::ConstTensor t = ctx.input(input);
  if (!t.exists()) return t;
  const LOOM_MemoryInfo* m = sdk::host().tensor_memory(t.raw());
  if (m != nullptr && !m->host_accessible)
    throw sdk::Error("cuda: input " + std::to_string(input) + " should be in host memory", LOOM_STATUS_FAIL);
  return t;
}

// The values of a host-memory float input (Resize roi and scales) as double;
// empty when absent.
inline std::vector<double> host_doubles(const sdk::KernelContext& ctx, size_t input, const std::string& op) {
  sdk::ConstTensor t = host_input(ctx, input);
  std::vector<double> v;
  if (!t.exists()) return v;
  const int64_t n = t.size();
  const void* p = t.raw_data();
  for (int64_t i = 0; i < n; ++i) {
    switch (t.dtype()) {
      case LOOM_DTYPE_FLOAT: v.push_back(static_cast<const float*>(p)[i]); break;
      case LOOM_DTYPE_DOUBLE: v.push_back(static_cast<const double*>(p)[i]); break;
      case LOOM_DTYPE_FLOAT16: v.push_back(static_cast<float>(static_cast<const sdk::Float16*>(p)[i])); break;
      case LOOM_DTYPE_BFLOAT16: v.push_back(static_cast<float>(static_cast<const sdk::BFloat16*>(p)[i])); break;
      default: fail_op(op, "input " + std::to_string(input) + " must be a float tensor, got " + sdk::dtype_name(t.dtype()));
    }
  }
  return v;
}

// A host-memory shape operand that must be present.
inline std::vector<int64_t> required_host_ints(const sdk::KernelContext& ctx, size_t input, const std::string& op,
                                               const std::string& what) {
  if (!ctx.input(input).exists()) fail_op(op, what + " (input " + std::to_string(input) + ") is missing");
  const int32_t dtype = ctx.input(input).dtype();
  if (dtype != LOOM_DTYPE_INT64 && dtype != LOOM_DTYPE_INT32)
    fail_op(op, what + " must be int64 or int32, got " + sdk::dtype_name(dtype));
  return host_int64s(ctx, input);
}

// The bit pattern of `v` in a fixed-size `dtype` (low bytes), as C++
// converts a float to it (float16 / bfloat16 rounded to nearest even).
inline uint64_t value_pattern(float v, int32_t dtype) {
  auto bits = [](auto x) {
    uint64_t p = 0;
    std::memcpy(&p, &x, sizeof(x));
    return p;
  };
  switch (dtype) {
    case LOOM_DTYPE_FLOAT: return bits(v);
    case LOOM_DTYPE_DOUBLE: return bits(static_cast<double>(v));
    case LOOM_DTYPE_FLOAT16: return sdk::Float16(v).bits;
    case LOOM_DTYPE_BFLOAT16: return sdk::BFloat16(v).bits;
    case LOOM_DTYPE_INT8: return bits(static_cast<int8_t>(v));
    case LOOM_DTYPE_UINT8: return bits(static_cast<uint8_t>(v));
    case LOOM_DTYPE_INT16: return bits(static_cast<int16_t>(v));
    case LOOM_DTYPE_UINT16: return bits(static_cast<uint16_t>(v));
    case LOOM_DTYPE_INT32: return bits(static_cast<int32_t>(v));
    case LOOM_DTYPE_UINT32: return bits(static_cast<uint32_t>(v));
    case LOOM_DTYPE_INT64: return bits(static_cast<int64_t>(v));
    case LOOM_DTYPE_UINT64: return bits(static_cast<uint64_t>(v));
    case LOOM_DTYPE_BOOL: return v != 0.f ? 1 : 0;
    default: throw sdk::Error("cuda: no fill value for " + sdk::dtype_name(dtype), LOOM_STATUS_NOT_IMPLEMENTED);
  }
}

// The bit pattern of element `i` of a host tensor of a fixed-size type.
inline uint64_t element_pattern(const sdk::ConstTensor& t, int64_t i) {
  const size_t b = element_bytes(t.dtype());
  if (b == 0 || b > 8) throw sdk::Error("cuda: no fill value for " + sdk::dtype_name(t.dtype()), LOOM_STATUS_NOT_IMPLEMENTED);
  uint64_t p = 0;
  std::memcpy(&p, static_cast<const char*>(t.raw_data()) + static_cast<size_t>(i) * b, b);
  return p;
}

// The StridedMap of `dims` read with `strides` (at most kMaxRank dims).
inline StridedMap map_of(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides) {
  try {
    return strided_map(dims, strides);
  } catch (const std::invalid_argument& e) {
    throw sdk::Error(std::string("cuda: ") + e.what(), LOOM_STATUS_NOT_IMPLEMENTED);
  }
}

// Input 0's rank known and at most kMaxRank, else why not (claim checks).
inline std::string rank_fits(const sdk::Node& node) {
  auto shape = node.input_shape(0);
  if (shape && shape->size() > static_cast<size_t>(kMaxRank))
    return "input has rank " + std::to_string(shape->size()) + " (at most " + std::to_string(kMaxRank) + ")";
  return {};
}

// Runtime rank check with the op's name.
inline void require_rank_fits(size_t rank, const std::string& op) {
  if (rank > static_cast<size_t>(kMaxRank))
    throw sdk::Error("cuda " + op + ": rank " + std::to_string(rank) + " exceeds " + std::to_string(kMaxRank),
                     LOOM_STATUS_NOT_IMPLEMENTED);
}

}  // namespace loom::cuda
