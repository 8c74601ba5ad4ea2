// Host-side planning of a cuBLASLt product with an epilogue (kernels/gemm_lt.cpp):
// which epilogue expresses a Gemm's C and activation, the stored layout of
// each operand, and the pointer alignments the algorithm must accept.
// Plain C++ (no CUDA), tested on the CPU (tests/ep/cuda/matmul_host_test.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "kernels/matmul_plan.h"

namespace loom::cuda {

// cuBLASLt epilogues Loom uses (CUBLASLT_EPILOGUE_*). Bias is a vector of
// the row-major output's n columns, added to every row before the ReLU.
enum class LtEpilogue { kDefault, kBias, kRelu, kReluBias };

// Whether Gemm's C of shape `c` adds one value per output column of a
// row-major [m, n] product: [n] or [1, n] (broadcast down the rows), which
// is what a bias epilogue adds. A scalar, a column or a full matrix is not.
inline bool is_row_bias(const std::vector<int64_t>& c, int64_t n) {
  if (c.size() == 1) return c[0] == n;
  if (c.size() == 2) return c[0] == 1 && c[1] == n;
  return false;
}

// The epilogue for Y = act(alpha * op(A) op(B) + beta * C): bias only when C
// is a row bias with beta 1; activation only ReLU. nullopt when cuBLASLt
// cannot express it (the caller takes the general path).
inline std::optional<LtEpilogue> lt_epilogue(bool has_c, const std::vector<int64_t>& c, int64_t n, float beta,
                                             bool relu) {
  const bool bias = has_c && beta != 0.f;
  if (bias && (beta != 1.f || !is_row_bias(c, n))) return std::nullopt;
  if (bias) return relu ? LtEpilogue::kReluBias : LtEpilogue::kBias;
  return relu ? LtEpilogue::kRelu : LtEpilogue::kDefault;
}

// A matrix as cublasLtMatrixLayoutCreate takes it: the stored column-major
// matrix's rows, columns and leading dimension (before any transpose).
struct LtLayout {
  int64_t rows = 0, cols = 0, ld = 0;
};
struct LtLayouts {
  LtLayout first, second, out;  // cuBLAS's A (Loom's B), B (Loom's A), and C / D
};

inline LtLayouts lt_layouts(const ColumnMajorGemm& c) {
  LtLayouts l;
  l.first = c.trans_first ? LtLayout{c.k, c.m, c.ld_first} : LtLayout{c.m, c.k, c.ld_first};
  l.second = c.trans_second ? LtLayout{c.n, c.k, c.ld_second} : LtLayout{c.k, c.n, c.ld_second};
  l.out = LtLayout{c.m, c.n, c.ldc};
  return l;
}

// The largest power of two (at most 256, cuBLASLt's default assumption)
// dividing `address`: what the algorithm may assume of a pointer.
inline uint32_t pointer_alignment(uintptr_t address) {
  uint32_t a = 256;
  while (a > 1 && address % a != 0) a /= 2;
  return a;
}

// cuBLASLt reads its workspace only at 256-byte aligned addresses
// (cublasLtMatmul answers CUBLAS_STATUS_INVALID_VALUE otherwise), while the
// host's scratch arena aligns to 64: ask for `bytes` plus the slack, then
// start at the first aligned address inside.
constexpr uint64_t kLtWorkspaceAlignment = 256;
inline uint64_t lt_workspace_request(uint64_t bytes) {
  return bytes == 0 ? 0 : bytes + kLtWorkspaceAlignment - 1;
}
inline uintptr_t lt_workspace_start(uintptr_t scratch) {
  return (scratch + kLtWorkspaceAlignment - 1) / kLtWorkspaceAlignment * kLtWorkspaceAlignment;
}

}  // namespace loom::cuda
