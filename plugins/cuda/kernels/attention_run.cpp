// Attention's pipeline: projection GEMM, split into heads, batched Q K^T,
// masked softmax, batched P V, merge of the heads. Each GEMM is one cuBLAS
// call (kernels/gemm_blas.h); the scores stay float for float16 inputs too.
#include <initializer_list>
#include <string>

#include "kernels/attention.h"
#include "kernels/gemm_blas.h"
#include "library_errors.h"
#include "loom/sdk.h"

namespace loom::cuda {
namespace {

size_t checked_bytes(std::initializer_list<int64_t> factors, size_t element, const char* what) {
  int64_t n = static_cast<int64_t>(element);
  for (int64_t f : factors) n = sdk::checked_mul(n, f, std::string("cuda Attention ") + what);
  return static_cast<size_t>(n);
}

void check_step(cudaError_t e, const char* what) {
  if (e == cudaErrorInvalidValue)
    throw sdk::Error(std::string("cuda Attention: no ") + what + " kernel for this type", LOOM_STATUS_NOT_IMPLEMENTED);
  check(e, what);
}

}  // namespace

AttentionScratchBytes attention_scratch_bytes(const AttentionProblem& p) {
  const AttentionDims& d = p.dims;
  const size_t es = sdk::dtype_size(p.dtype);
  AttentionScratchBytes b;
  const int64_t width = sdk::checked_add(sdk::checked_mul(2, d.dq(), "cuda Attention width"), d.dv(),
                                         "cuda Attention width");
  b.qkv = checked_bytes({d.batch, d.seq, width}, es, "projection");
  b.heads = b.qkv;
  b.scores = checked_bytes({d.batch, d.heads, d.seq, d.seq}, sizeof(float), "scores");
  b.probs = p.dtype == LOOM_DTYPE_FLOAT ? 0 : checked_bytes({d.batch, d.heads, d.seq, d.seq}, es, "probabilities");
  return b;
}

void run_attention(cublasHandle_t blas, cudaStream_t stream, const AttentionProblem& p, const void* input,
                   const void* weights, const void* bias, void* y, const AttentionScratch& scratch) {
  const AttentionDims& d = p.dims;
  const int64_t rows = d.batch * d.seq, width = d.width(), S = d.seq, H = d.head, Hv = d.head_v;
  const size_t es = sdk::dtype_size(p.dtype);
  const GemmTypes same{p.dtype, p.dtype, p.tf32};

  // qkv [B*S, width] = input [B*S, d_in] x weights [d_in, width].
  if (p.d_in > 0)
    gemm_strided(blas, RowMajorGemm{false, false, rows, width, p.d_in}, same, 1.0, 0.0, input, 0, weights, 0,
                 scratch.qkv, 0, 1);
  else
    check(cudaMemsetAsync(scratch.qkv, 0, static_cast<size_t>(rows * width) * es, stream), "cudaMemsetAsync");

  char* q = static_cast<char*>(scratch.heads);
  char* k = q + static_cast<size_t>(d.batch * d.dq() * S) * es;
  char* v = k + static_cast<size_t>(d.batch * d.dq() * S) * es;
  check_step(launch_split_qkv(p.dtype, scratch.qkv, bias, d, q, k, v, stream), "QKV split");

  // scores [B*N, S, S] = scale * Q [B*N, S, H] x K^T, in float.
  const int64_t heads = d.batch * d.heads;
  gemm_strided(blas, RowMajorGemm{false, true, S, S, H}, GemmTypes{p.dtype, LOOM_DTYPE_FLOAT, p.tf32}, p.scale, 0.0, q,
               S * H, k, S * H, scratch.scores, S * S, heads);

  void* probs = p.dtype == LOOM_DTYPE_FLOAT ? static_cast<void*>(scratch.scores) : scratch.probs;
  check_step(launch_masked_softmax(p.dtype, scratch.scores, p.mask, d, probs, stream), "masked softmax");

  // context [B*N, S, Hv] = probs [B*N, S, S] x V [B*N, S, Hv], into the
  // projection's buffer (no longer read).
  gemm_strided(blas, RowMajorGemm{false, false, S, Hv, S}, same, 1.0, 0.0, probs, S * S, v, S * Hv, scratch.qkv,
               S * Hv, heads);
  check_step(launch_merge_heads(p.dtype, scratch.qkv, d, y, stream), "head merge");
}

}  // namespace loom::cuda
