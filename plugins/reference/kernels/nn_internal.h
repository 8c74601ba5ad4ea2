// Internal interface of the reference EP's neural-network family: the
// registration functions of its files (called from register_nn_kernels in
// nn.cpp) and the shared row-major GEMM used by Conv, MatMul and Gemm.
#pragma once

#include <cstdint>
#include <vector>

#include "common/dispatch.h"
#include "loom/sdk.h"

namespace loom::reference {

void register_nn_conv_kernels(sdk::KernelRegistry& r);     // Conv, ConvTranspose, ConvInteger, QLinearConv
void register_nn_pool_kernels(sdk::KernelRegistry& r);     // Max/Average/Lp/Global pooling, MaxUnpool
void register_nn_matmul_kernels(sdk::KernelRegistry& r);   // MatMul, Gemm, MatMulInteger, QLinearMatMul
void register_nn_quant_kernels(sdk::KernelRegistry& r);    // (De)QuantizeLinear, DynamicQuantizeLinear
void register_nn_spatial_kernels(sdk::KernelRegistry& r);  // GridSample, RoiAlign, NonMaxSuppression
void register_nn_rnn_kernels(sdk::KernelRegistry& r);      // RNN, GRU, LSTM
void register_nn_attention_kernels(sdk::KernelRegistry& r);  // Attention
void register_nn_recent_kernels(sdk::KernelRegistry& r);   // RotaryEmbedding, Col2Im, AffineGrid
void register_nn_recurrent_state_kernels(sdk::KernelRegistry& r);  // LinearAttention, CausalConvWithState
void register_nn_deform_conv_kernels(sdk::KernelRegistry& r);  // DeformConv
void register_nn_flex_attention_kernels(sdk::KernelRegistry& r);  // ai.onnx.preview FlexAttention

// C[M,N] = alpha * op(A) * op(B) + beta * C, all row-major with leading
// dimensions lda/ldb/ldc (elements). op(A) is [M,K], op(B) is [K,N]. With
// beta == 0, C is not read (it may hold garbage). Instantiated in
// nn_gemm.cpp for float, double, int32_t, int64_t, uint32_t, uint64_t.
// With `stop` (the kernel's context), a large product runs in blocks of rows
// or columns and stops between them once the run is cancelled or timed out
// (sdk::KernelContext::stop_if_asked): one hostile product must not outlive
// limits.run_timeout_ms by minutes.
template <class T>
void nn_gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
             int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc,
             const sdk::KernelContext* stop = nullptr);

// Conv (nn_conv.cpp) and Gemm (nn_matmul.cpp) of `node`'s attributes on the
// context's inputs 0..2, written to output 0, which is returned: com.microsoft
// FusedConv / FusedGemm apply their epilogue to it in place.
sdk::Tensor conv_into_output(sdk::KernelContext& ctx, const sdk::Node& node);
// The loom.nhwc pools (nn_pool.cpp), for register_nhwc_kernels.
void register_nhwc_pool_kernels(sdk::KernelRegistry& r);
sdk::Tensor gemm_into_output(sdk::KernelContext& ctx, const sdk::Node& node);

// com.microsoft MatMulIntegerToFloat (nn_matmul.cpp, beside the integer
// matmul it shares; registered by contrib_matmul.cpp).
void matmul_integer_to_float(sdk::KernelContext& ctx);

// Copies n elements of T into accumulator type A (16-bit floats via float).
template <class A, class T>
std::vector<A> nn_to_vector(const T* p, int64_t n) {
  std::vector<A> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<A>(static_cast<compute_t<T>>(p[i]));
  return v;
}

}  // namespace loom::reference
