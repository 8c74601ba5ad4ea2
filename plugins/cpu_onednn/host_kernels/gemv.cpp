#include "host_kernels/gemv.h"

#include <algorithm>

#include "host_kernels/parallel.h"

namespace loom::onednn::host_kernels {
namespace {

// Outputs computed together: their rows of W^T are read side by side, each
// into its own accumulators, so x is loaded once per block and the memory
// system fetches that many streams at once. 16 with AVX-512 (half its 32
// registers; fewer ran slower, more gained nothing: bench/results/
// 2026-11-28-cpu-onednn-host-kernels.md). 4 elsewhere: AVX2's 16 registers
// hold 4 rows of two-register accumulators and x.
constexpr int64_t kWideRows = 16;
constexpr int64_t kRows = 4;
constexpr int64_t kLanes = 16;
typedef float Lanes __attribute__((vector_size(kLanes * sizeof(float))));

float horizontal_sum(Lanes v) {
  float s = 0.f;
  for (int64_t i = 0; i < kLanes; ++i) s += v[i];
  return s;
}

// y[n] = sum_k wt[n * k_size + k] * x[k] for n in [n0, n1) (+ bias),
// kRowsPerBlock outputs at a time.
template <int64_t kRowsPerBlock>
__attribute__((always_inline)) inline void gemv_rows_body(const float* x, const float* wt, const float* bias,
                                                          bool bias_scalar, float* y, int64_t k_size, int64_t n0,
                                                          int64_t n1) {
  const int64_t k_vec = k_size / kLanes * kLanes;
  for (int64_t n = n0; n < n1; n += kRowsPerBlock) {
    const int64_t rows = std::min(kRowsPerBlock, n1 - n);
    Lanes acc[kRowsPerBlock] = {};
    for (int64_t k = 0; k < k_vec; k += kLanes) {
      Lanes xv;
      __builtin_memcpy(&xv, x + k, sizeof(xv));
      for (int64_t r = 0; r < rows; ++r) {
        Lanes wv;
        __builtin_memcpy(&wv, wt + (n + r) * k_size + k, sizeof(wv));
        acc[r] += wv * xv;
      }
    }
    for (int64_t r = 0; r < rows; ++r) {
      float s = horizontal_sum(acc[r]);
      for (int64_t k = k_vec; k < k_size; ++k) s += wt[(n + r) * k_size + k] * x[k];
      if (bias != nullptr) s += bias[bias_scalar ? 0 : n + r];
      y[n + r] = s;
    }
  }
}

__attribute__((target("avx512f,fma"))) void gemv_rows_avx512(const float* x, const float* wt, const float* bias,
                                                             bool bias_scalar, float* y, int64_t k_size, int64_t n0,
                                                             int64_t n1) {
  gemv_rows_body<kWideRows>(x, wt, bias, bias_scalar, y, k_size, n0, n1);
}

__attribute__((target_clones("avx2", "default"))) void gemv_rows_narrow(const float* x, const float* wt,
                                                                      const float* bias, bool bias_scalar, float* y,
                                                                      int64_t k_size, int64_t n0, int64_t n1) {
  gemv_rows_body<kRows>(x, wt, bias, bias_scalar, y, k_size, n0, n1);
}

}  // namespace

void gemv(int threads, const float* x, const float* wt, const float* bias, bool bias_scalar, float* y, int64_t k_size,
          int64_t n_size) {
  static const bool wide = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
  // Blocks of kWideRows outputs per thread (a multiple of kRows).
  const int64_t blocks = (n_size + kWideRows - 1) / kWideRows;
  for_each_thread_range(threads, blocks, [&](int64_t b0, int64_t b1) {
    const int64_t n0 = b0 * kWideRows, n1 = std::min(n_size, b1 * kWideRows);
    if (wide) gemv_rows_avx512(x, wt, bias, bias_scalar, y, k_size, n0, n1);
    else gemv_rows_narrow(x, wt, bias, bias_scalar, y, k_size, n0, n1);
  });
}

}  // namespace loom::onednn::host_kernels
