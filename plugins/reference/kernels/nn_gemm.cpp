// Row-major GEMM on Eigen, compiled once per element type and shared by the
// nn family's Conv, ConvTranspose, MatMul, Gemm and their integer variants.
#include <Eigen/Dense>

#include <algorithm>

#include "kernels/nn_internal.h"

namespace loom::reference {

namespace {

// Multiply-adds per block between stop checks: tens of milliseconds.
constexpr int64_t kMacsPerBlock = int64_t{1} << 26;

}  // namespace

template <class T>
void nn_gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
             int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc, const sdk::KernelContext* stop) {
  if (stop != nullptr && m > 0 && n > 0 && k > 0 && (m > 1 || n > 1)) {
    // m * n * k may overflow: compare per-block sizes instead.
    const bool by_rows = m >= n;
    const int64_t lines = by_rows ? m : n, per_line = (by_rows ? n : m);
    const int64_t line_macs = per_line > kMacsPerBlock / k ? kMacsPerBlock : per_line * k;
    const int64_t block = std::max<int64_t>(1, kMacsPerBlock / std::max<int64_t>(line_macs, 1));
    if (block < lines) {
      for (int64_t first = 0; first < lines; first += block) {
        stop->stop_if_asked();
        const int64_t count = std::min(block, lines - first);
        if (by_rows)  // rows of A and C
          nn_gemm<T>(trans_a, trans_b, count, n, k, alpha, trans_a ? a + first : a + first * lda, lda, b, ldb, beta,
                     c + first * ldc, ldc, nullptr);
        else  // columns of B and C
          nn_gemm<T>(trans_a, trans_b, m, count, k, alpha, a, lda, trans_b ? b + first * ldb : b + first, ldb, beta,
                     c + first, ldc, nullptr);
      }
      return;
    }
  }
  using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using CMap = Eigen::Map<const Mat, 0, Eigen::OuterStride<>>;
  using MMap = Eigen::Map<Mat, 0, Eigen::OuterStride<>>;
  if (m <= 0 || n <= 0) return;
  MMap cm(c, m, n, Eigen::OuterStride<>(ldc));
  if (k <= 0) {
    if (beta == T(0)) cm.setZero();
    else cm *= beta;
    return;
  }
  CMap am(a, trans_a ? k : m, trans_a ? m : k, Eigen::OuterStride<>(lda));
  CMap bm(b, trans_b ? n : k, trans_b ? k : n, Eigen::OuterStride<>(ldb));
  // Separate branches so Eigen sees plain (transposed) maps and picks its
  // blocked GEMM kernel for each case.
  auto run = [&](const auto& lhs, const auto& rhs) {
    if (beta == T(0)) {
      cm.noalias() = lhs * rhs;
      if (alpha != T(1)) cm *= alpha;
    } else {
      if (beta != T(1)) cm *= beta;
      if (alpha == T(1)) cm.noalias() += lhs * rhs;
      else cm.noalias() += alpha * (lhs * rhs);
    }
  };
  if (!trans_a && !trans_b) run(am, bm);
  else if (trans_a && !trans_b) run(am.transpose(), bm);
  else if (!trans_a && trans_b) run(am, bm.transpose());
  else run(am.transpose(), bm.transpose());
}

#define LOOM_NN_GEMM(T)                                                                      \
  template void nn_gemm<T>(bool, bool, int64_t, int64_t, int64_t, T, const T*, int64_t, const T*, \
                           int64_t, T, T*, int64_t, const sdk::KernelContext*);
LOOM_NN_GEMM(float)
LOOM_NN_GEMM(double)
LOOM_NN_GEMM(int32_t)
LOOM_NN_GEMM(int64_t)
LOOM_NN_GEMM(uint32_t)
LOOM_NN_GEMM(uint64_t)
#undef LOOM_NN_GEMM

}  // namespace loom::reference
