// Host-side planning of the matrix products on cuBLAS (MatMul, FusedMatMul,
// Gemm and the GEMMs inside Attention): numpy shapes with 1-D operands and
// broadcast batch dims, how the batch maps onto cuBLAS calls, and the
// row-major to column-major translation of one product. Plain C++ (no CUDA),
// so the CPU tests (tests/ep/cuda/matmul_host_test.cpp) run all of it.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/index_math.h"

namespace loom::cuda {

// C[m, n] = op(A)[m, k] x op(B)[k, n] over contiguous row-major matrices: A
// is stored [m, k] ([k, m] when trans_a), B [k, n] ([n, k] when trans_b), C
// [m, n].
struct RowMajorGemm {
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0;
};

// The same product as cuBLAS (column-major) computes it. A row-major [r, c]
// matrix is the column-major [c, r] matrix with leading dimension c, so the
// row-major C = op(A) op(B) is the column-major C^T = op(B)^T op(A)^T:
// cuBLAS's first operand is B and its second A, each with its own transpose
// flag, and every leading dimension is the stored row length.
struct ColumnMajorGemm {
  bool trans_first = false, trans_second = false;  // cuBLAS transa, transb
  int64_t m = 0, n = 0, k = 0;                     // cuBLAS m, n, k
  int64_t ld_first = 0, ld_second = 0, ldc = 0;    // cuBLAS lda, ldb, ldc
};

inline ColumnMajorGemm column_major(const RowMajorGemm& g) {
  ColumnMajorGemm c;
  c.trans_first = g.trans_b;
  c.trans_second = g.trans_a;
  c.m = g.n;
  c.n = g.m;
  c.k = g.k;
  c.ld_first = g.trans_b ? g.k : g.n;
  c.ld_second = g.trans_a ? g.m : g.k;
  c.ldc = g.n;
  return c;
}

// The shapes of a numpy matrix product (MatMul; FusedMatMul adds the
// transposes): a 1-D A is [1, K] and a 1-D B [K, 1], the added dim dropped
// from the output; batch dims (all but the last two) broadcast.
struct MatMulShape {
  int64_t m = 0, n = 0, k = 0;
  bool trans_a = false, trans_b = false;  // as applied (never for a 1-D operand)
  std::vector<int64_t> a_batch, b_batch, batch, out;
};

inline int64_t matmul_batch_count(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// Throws std::invalid_argument when the operands do not multiply.
inline MatMulShape matmul_shape(std::vector<int64_t> a, std::vector<int64_t> b, bool trans_a = false,
                                bool trans_b = false) {
  if (a.empty() || b.empty()) throw std::invalid_argument("operands must have rank >= 1");
  const bool a1 = a.size() == 1, b1 = b.size() == 1;
  MatMulShape s;
  s.trans_a = trans_a && !a1;
  s.trans_b = trans_b && !b1;
  if (a1) a.insert(a.begin(), 1);
  if (b1) b.push_back(1);
  const size_t ra = a.size(), rb = b.size();
  s.m = s.trans_a ? a[ra - 1] : a[ra - 2];
  s.k = s.trans_a ? a[ra - 2] : a[ra - 1];
  const int64_t kb = s.trans_b ? b[rb - 1] : b[rb - 2];
  s.n = s.trans_b ? b[rb - 2] : b[rb - 1];
  if (kb != s.k)
    throw std::invalid_argument("inner dimensions differ: op(A) has K = " + std::to_string(s.k) + ", op(B) has K = " +
                                std::to_string(kb));
  s.a_batch.assign(a.begin(), a.end() - 2);
  s.b_batch.assign(b.begin(), b.end() - 2);
  s.batch = broadcast_shape(s.a_batch, s.b_batch);
  s.out = s.batch;
  if (!a1) s.out.push_back(s.m);
  if (!b1) s.out.push_back(s.n);
  return s;
}

// How the output's matrices are computed:
//  kStrided: one strided-batched GEMM; each operand either has one matrix per
//    output matrix or a single matrix every output matrix reads (stride 0).
//  kFoldedRows: A has one matrix per output matrix, B a single one and A is
//    not transposed: A's batch is folded into M, one GEMM of count * m rows.
//  kLoop: any other broadcast (e.g. [2,1,M,K] x [1,3,K,N]): one GEMM per
//    output matrix, reading the matrices broadcast_matrix_index names.
enum class BatchMode { kStrided, kFoldedRows, kLoop };

struct BatchPlan {
  BatchMode mode = BatchMode::kStrided;
  int64_t count = 0;                 // output matrices
  int64_t stride_a = 0, stride_b = 0;  // elements between matrices (kStrided; 0: broadcast)
};

inline BatchPlan plan_batches(const MatMulShape& s) {
  BatchPlan p;
  p.count = matmul_batch_count(s.batch);
  const int64_t ca = matmul_batch_count(s.a_batch), cb = matmul_batch_count(s.b_batch);
  // An operand with as many matrices as the output has them in the output's
  // order (each of its dims is 1 or the output's, and the products agree).
  const bool a_full = ca == p.count, b_full = cb == p.count;
  if (p.count > 1 && a_full && cb == 1 && !s.trans_a) {
    p.mode = BatchMode::kFoldedRows;
    return p;
  }
  if ((a_full || ca == 1) && (b_full || cb == 1)) {
    p.mode = BatchMode::kStrided;
    p.stride_a = ca == 1 ? 0 : s.m * s.k;
    p.stride_b = cb == 1 ? 0 : s.k * s.n;
    return p;
  }
  p.mode = BatchMode::kLoop;
  return p;
}

// The matrix of an operand with batch dims `operand` (right-aligned to
// `batch`, each 1 or equal) that output matrix `i` (row-major over `batch`)
// reads.
inline int64_t broadcast_matrix_index(int64_t i, const std::vector<int64_t>& batch,
                                      const std::vector<int64_t>& operand) {
  int64_t index = 0, stride = 1;
  const size_t offset = batch.size() - operand.size();
  for (size_t d = batch.size(); d-- > 0;) {
    const int64_t q = i / batch[d], coord = i - q * batch[d];
    i = q;
    if (d < offset) continue;
    const int64_t od = operand[d - offset];
    if (od != 1) index += coord * stride;
    stride *= od;
  }
  return index;
}

// Gemm's C: whether dims `c` broadcast unidirectionally to [m, n].
inline bool gemm_c_broadcasts(const std::vector<int64_t>& c, int64_t m, int64_t n) {
  if (c.size() > 2) return false;
  const std::vector<int64_t> y = {m, n};
  for (size_t i = 0; i < c.size(); ++i) {
    const int64_t want = y[2 - c.size() + i];
    if (c[i] != 1 && c[i] != want) return false;
  }
  return true;
}

}  // namespace loom::cuda
