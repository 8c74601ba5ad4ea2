// What the matrix-product kernels share (kernels/matmul_kernels.cpp,
// kernels/gemm_kernels.cpp): their element types, messages, zero fill of an
// empty product, the fp16 mode's operand copies and the type-agreement
// claim rule.
#pragma once

#include <string>
#include <vector>

#include "cuda_check.h"
#include "kernels/half_operands.h"
#include "kernels/kernel_support.h"
#include "loom/sdk.h"
#include "stream_resources.h"

namespace loom::cuda {

inline const std::vector<int32_t> kBlasTypes = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_FLOAT16, LOOM_DTYPE_DOUBLE};

inline std::string dims_string(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

[[noreturn]] inline void invalid(const std::string& op, const std::string& what) {
  throw sdk::Error("cuda " + op + ": " + what, LOOM_STATUS_INVALID_ARGUMENT);
}

inline void zero_fill(const sdk::Tensor& y, int64_t count, const sdk::KernelContext& ctx) {
  check(cudaMemsetAsync(y.raw_mutable_data(), 0, static_cast<size_t>(count) * element_bytes(y.dtype()),
                        stream_of(ctx)),
        "cudaMemsetAsync");
}

// fp16 mode (kernels/half_operands.h): A and B as float16, each kept with
// the kernel when it is a constant.
struct HalfOperands {
  explicit HalfOperands(const sdk::Node& node)
      : a_constant(node.input_constant(0).exists()), b_constant(node.input_constant(1).exists()) {}
  bool a_constant, b_constant;
  HalfConstant a, b;
};

// Claim rule: the first three inputs (A, B, C) share one element type.
inline std::string same_input_types(const sdk::Node& node) {
  const size_t inputs = node.input_count() < 3 ? node.input_count() : 3;
  for (size_t i = 1; i < inputs; ++i) {
    if (node.input_name(i).empty()) continue;
    const int32_t d = node.input_dtype(i), d0 = node.input_dtype(0);
    if (d != LOOM_DTYPE_UNDEFINED && d0 != LOOM_DTYPE_UNDEFINED && d != d0) return "inputs of different element types";
  }
  return {};
}

}  // namespace loom::cuda
