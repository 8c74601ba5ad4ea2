// com.microsoft Attention on the CUDA EP: the device steps
// (kernels/attention.cu) and the pipeline that chains them with cuBLAS
// (kernels/attention_run.cpp). Pointers are device memory; work is queued
// on `stream` (the cuBLAS handle must be bound to it). Launchers return the
// launch error, or cudaErrorInvalidValue for a type they lack (float and
// float16).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/attention_mask.h"

namespace loom::cuda {

class KernelTable;
// Attention's kernel (kernels/attention_kernels.cpp); register_matmul_kernels
// calls it.
void register_attention_kernels(KernelTable& table);

// qkv [B*S, width] (+ bias [width], may be null) split into Q, K [B, N, S, H]
// and V [B, N, S, Hv]; the bias is added in float.
cudaError_t launch_split_qkv(int32_t dtype, const void* qkv, const void* bias, const AttentionDims& d, void* q,
                             void* k, void* v, cudaStream_t stream);

// probs[r, t] = softmax over t of (scores[r, t] + mask value) for each of the
// B*N*S rows r = ((b * N + n) * S + s) of S keys, in float; probs has `dtype`
// and may be `scores` itself when dtype is float.
cudaError_t launch_masked_softmax(int32_t dtype, const float* scores, const AttentionMask& mask,
                                  const AttentionDims& d, void* probs, cudaStream_t stream);

// context [B, N, S, Hv] to y [B, S, N * Hv].
cudaError_t launch_merge_heads(int32_t dtype, const void* context, const AttentionDims& d, void* y,
                               cudaStream_t stream);

struct AttentionProblem {
  int32_t dtype = 0;  // of input, weights, bias and output
  AttentionDims dims;
  int64_t d_in = 0;   // input hidden size (weights rows)
  float scale = 1.f;  // applied to Q.K
  AttentionMask mask;
  bool tf32 = false;  // float products may use TF32
};

// Device scratch the pipeline needs (bytes; 0: not needed).
struct AttentionScratchBytes {
  size_t qkv = 0;     // projection [B*S, width], later the context [B, N, S, Hv]
  size_t heads = 0;   // Q, K, V one after the other
  size_t scores = 0;  // float [B, N, S, S]
  size_t probs = 0;   // [B, N, S, S] of dtype (float16 only: float ones overwrite the scores)
};
// Throws INVALID_ARGUMENT when a size overflows.
AttentionScratchBytes attention_scratch_bytes(const AttentionProblem& p);

struct AttentionScratch {
  void* qkv = nullptr;
  void* heads = nullptr;
  float* scores = nullptr;
  void* probs = nullptr;
};

// y [B, S, N * Hv] = Attention(input [B, S, d_in], weights [d_in, width],
// bias [width] or null). Needs B, S > 0 and H, Hv > 0. Throws sdk::Error on
// a failed launch or cuBLAS call.
void run_attention(cublasHandle_t blas, cudaStream_t stream, const AttentionProblem& p, const void* input,
                   const void* weights, const void* bias, void* y, const AttentionScratch& scratch);

}  // namespace loom::cuda
