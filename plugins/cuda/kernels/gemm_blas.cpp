#include "kernels/gemm_blas.h"

#include <climits>
#include <string>

#include "library_errors.h"
#include "loom/sdk.h"

namespace loom::cuda {
namespace {

[[noreturn]] void unsupported(const std::string& what) {
  throw sdk::Error("cuda matrix product: " + what, LOOM_STATUS_NOT_IMPLEMENTED);
}

int blas_int(int64_t v, const char* what) {
  if (v < 0 || v > INT_MAX)
    unsupported(std::string(what) + " = " + std::to_string(v) + " is outside cuBLAS's int range");
  return static_cast<int>(v);
}

cudaDataType data_type(int32_t dtype) {
  switch (dtype) {
    case LOOM_DTYPE_FLOAT: return CUDA_R_32F;
    case LOOM_DTYPE_FLOAT16: return CUDA_R_16F;
    case LOOM_DTYPE_DOUBLE: return CUDA_R_64F;
    default: unsupported("no cuBLAS product on " + sdk::dtype_name(dtype));
  }
}

// The compute type of a product, checking the (A/B, C) type pair.
cublasComputeType_t compute_type(const GemmTypes& t) {
  if (t.ab == LOOM_DTYPE_DOUBLE && t.c == LOOM_DTYPE_DOUBLE) return CUBLAS_COMPUTE_64F;
  if (t.ab == LOOM_DTYPE_FLOAT && t.c == LOOM_DTYPE_FLOAT)
    return t.tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  if (t.ab == LOOM_DTYPE_FLOAT16 && (t.c == LOOM_DTYPE_FLOAT16 || t.c == LOOM_DTYPE_FLOAT)) return CUBLAS_COMPUTE_32F;
  unsupported("no cuBLAS product of " + sdk::dtype_name(t.ab) + " into " + sdk::dtype_name(t.c));
}

size_t bytes_of(int32_t dtype) { return sdk::dtype_size(dtype); }

// alpha and beta in the scale type of the compute type (double for 64F,
// float otherwise), kept alive for the call.
struct Scalars {
  float f[2];
  double d[2];
  bool is_double;
  Scalars(double alpha, double beta, bool dbl) : is_double(dbl) {
    f[0] = static_cast<float>(alpha);
    f[1] = static_cast<float>(beta);
    d[0] = alpha;
    d[1] = beta;
  }
  const void* alpha() const { return is_double ? static_cast<const void*>(&d[0]) : &f[0]; }
  const void* beta() const { return is_double ? static_cast<const void*>(&d[1]) : &f[1]; }
};

// The cuBLAS arguments of one product, checked for int range.
struct BlasArgs {
  cublasOperation_t op_first, op_second;
  int m, n, k, ld_first, ld_second, ldc;
};

BlasArgs blas_args(const RowMajorGemm& g) {
  if (g.m <= 0 || g.n <= 0 || g.k <= 0) unsupported("empty product reached cuBLAS (an EP bug)");
  const ColumnMajorGemm c = column_major(g);
  BlasArgs a;
  a.op_first = c.trans_first ? CUBLAS_OP_T : CUBLAS_OP_N;
  a.op_second = c.trans_second ? CUBLAS_OP_T : CUBLAS_OP_N;
  a.m = blas_int(c.m, "N");
  a.n = blas_int(c.n, "M");
  a.k = blas_int(c.k, "K");
  a.ld_first = blas_int(c.ld_first, "leading dimension of B");
  a.ld_second = blas_int(c.ld_second, "leading dimension of A");
  a.ldc = blas_int(c.ldc, "leading dimension of C");
  return a;
}

void gemm_one(cublasHandle_t h, const BlasArgs& x, const GemmTypes& t, const Scalars& s, const void* a,
              const void* b, void* c) {
  const cudaDataType ab = data_type(t.ab), ct = data_type(t.c);
  check_blas(cublasGemmEx(h, x.op_first, x.op_second, x.m, x.n, x.k, s.alpha(), b, ab, x.ld_first, a, ab,
                          x.ld_second, s.beta(), c, ct, x.ldc, compute_type(t), CUBLAS_GEMM_DEFAULT),
             "cublasGemmEx");
}

const char* at(const void* p, int64_t elements, size_t bytes) {
  return static_cast<const char*>(p) + static_cast<size_t>(elements) * bytes;
}

}  // namespace

void gemm_strided(cublasHandle_t handle, const RowMajorGemm& g, const GemmTypes& types, double alpha, double beta,
                  const void* a, int64_t stride_a, const void* b, int64_t stride_b, void* c, int64_t stride_c,
                  int64_t batch) {
  const BlasArgs x = blas_args(g);
  const cublasComputeType_t compute = compute_type(types);
  const Scalars s(alpha, beta, compute == CUBLAS_COMPUTE_64F);
  if (batch == 1) {
    gemm_one(handle, x, types, s, a, b, c);
    return;
  }
  const cudaDataType ab = data_type(types.ab), ct = data_type(types.c);
  check_blas(cublasGemmStridedBatchedEx(handle, x.op_first, x.op_second, x.m, x.n, x.k, s.alpha(), b, ab, x.ld_first,
                                        stride_b, a, ab, x.ld_second, stride_a, s.beta(), c, ct, x.ldc, stride_c,
                                        blas_int(batch, "batch count"), compute, CUBLAS_GEMM_DEFAULT),
             "cublasGemmStridedBatchedEx");
}

void matmul_batches(cublasHandle_t handle, const MatMulShape& s, const BatchPlan& plan, const GemmTypes& types,
                    double alpha, const void* a, const void* b, void* y) {
  RowMajorGemm g{s.trans_a, s.trans_b, s.m, s.n, s.k};
  const int64_t mn = s.m * s.n;
  switch (plan.mode) {
    case BatchMode::kFoldedRows:
      g.m = sdk::checked_mul(plan.count, s.m, "cuda MatMul rows");
      gemm_strided(handle, g, types, alpha, 0.0, a, 0, b, 0, y, 0, 1);
      return;
    case BatchMode::kStrided:
      gemm_strided(handle, g, types, alpha, 0.0, a, plan.stride_a, b, plan.stride_b, y, mn, plan.count);
      return;
    case BatchMode::kLoop: {
      const BlasArgs x = blas_args(g);
      const Scalars sc(alpha, 0.0, compute_type(types) == CUBLAS_COMPUTE_64F);
      const size_t eab = bytes_of(types.ab), ec = bytes_of(types.c);
      const int64_t mk = s.m * s.k, kn = s.k * s.n;
      for (int64_t i = 0; i < plan.count; ++i) {
        const int64_t ia = broadcast_matrix_index(i, s.batch, s.a_batch);
        const int64_t ib = broadcast_matrix_index(i, s.batch, s.b_batch);
        gemm_one(handle, x, types, sc, at(a, ia * mk, eab), at(b, ib * kn, eab),
                 const_cast<char*>(at(y, i * mn, ec)));
      }
      return;
    }
  }
}

}  // namespace loom::cuda
