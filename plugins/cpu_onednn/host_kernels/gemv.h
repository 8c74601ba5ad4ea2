// Single-row matrix products, y = x W (+ bias) with x one row of K floats:
// one sequential pass over W's transpose, each output the dot product of a
// contiguous row of it, outputs split across threads (raw pointers, no
// oneDNN). oneDNN 2.6 runs M = 1 through its blocked GEMM, which walks the
// packed weights in interleaved streams and reads them well below the
// memory's streaming rate. The cpu_onednn builder picks it (ops/gemv.h);
// bench/results/2026-11-28-cpu-onednn-host-kernels.md has what it was
// measured against.
#pragma once

#include <cstdint>

namespace loom::onednn::host_kernels {

// y[n] = sum_k wt[n * k_size + k] * x[k] (+ bias[n], or bias[0] when
// bias_scalar; no bias when NULL) for n in [0, n_size), on `threads`
// OpenMP teams; AVX-512 where the CPU has it.
void gemv(int threads, const float* x, const float* wt, const float* bias, bool bias_scalar, float* y, int64_t k_size,
          int64_t n_size);

}  // namespace loom::onednn::host_kernels
