// Row-major matrix products on cuBLAS (kernels/gemm_blas.cpp), shared by
// MatMul, Gemm, FusedMatMul and Attention. Every pointer is device memory;
// the work is queued on the handle's stream (StreamResources binds it);
// alpha and beta are host values (pointer mode host). Errors throw
// sdk::Error naming the call.
//
// Element types (A and B share one; C may differ only as below):
//  float:   CUBLAS_COMPUTE_32F, or CUBLAS_COMPUTE_32F_FAST_TF32 when `tf32`
//           (EpOptions::use_tf32: inputs rounded to TF32's 10-bit mantissa).
//  float16: CUDA_R_16F operands with CUBLAS_COMPUTE_32F, i.e. products
//           accumulated in float and rounded to half once at the end, as the
//           reference EP computes float16 products; C may also be float
//           (Attention's scores).
//  double:  CUBLAS_COMPUTE_64F.
#pragma once

#include <cublas_v2.h>

#include <cstdint>

#include "kernels/matmul_plan.h"

namespace loom::cuda {

struct GemmTypes {
  int32_t ab = 0;  // LOOM_DTYPE of A and B
  int32_t c = 0;   // LOOM_DTYPE of C
  bool tf32 = false;
};

// `batch` products C_i = alpha op(A_i) op(B_i) + beta C_i, operand i at
// i * stride elements of each (stride 0: every product reads one matrix).
// Needs m, n, k > 0 and batch > 0; throws NOT_IMPLEMENTED for sizes past
// cuBLAS's int range or a type combination it lacks. beta == 0: C is not
// read.
void gemm_strided(cublasHandle_t handle, const RowMajorGemm& g, const GemmTypes& types, double alpha, double beta,
                  const void* a, int64_t stride_a, const void* b, int64_t stride_b, void* c, int64_t stride_c,
                  int64_t batch);

// y = alpha * A x B over the numpy shapes `s` (y has s.out dims, contiguous)
// along `plan`. Needs k > 0 and at least one output element.
void matmul_batches(cublasHandle_t handle, const MatMulShape& s, const BatchPlan& plan, const GemmTypes& types,
                    double alpha, const void* a, const void* b, void* y);

}  // namespace loom::cuda
