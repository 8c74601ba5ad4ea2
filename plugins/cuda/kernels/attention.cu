// Attention's element steps: the QKV split (one thread per projected
// element), the masked softmax (one block per score row, float throughout)
// and the head merge (one thread per output element).
#include <math_constants.h>

#include "kernels/attention.h"
#include "kernels/device_types.cuh"

namespace loom::cuda {
namespace {

template <class T>
__global__ void split_qkv_kernel(const T* qkv, const T* bias, AttentionDims d, T* q, T* k, T* v, int64_t n) {
  const int64_t w = d.width();
  LOOM_GRID_STRIDE_LOOP(i, n) {
    const int64_t row = i / w, c = i - row * w;
    const int64_t b = row / d.seq, s = row - b * d.seq;
    auto value = to_acc(qkv[i]);
    if (bias != nullptr) value += to_acc(bias[c]);
    const QkvSlot slot = qkv_slot(d, b, s, c);
    T* dst = slot.which == 0 ? q : slot.which == 1 ? k : v;
    dst[slot.offset] = from_acc<T>(value);
  }
}

template <class T>
__global__ void merge_heads_kernel(const T* context, AttentionDims d, T* y, int64_t n) {
  LOOM_GRID_STRIDE_LOOP(i, n) y[i] = context[merged_source(d, i)];
}

__device__ __forceinline__ float warp_reduce(float v, bool is_max) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    const float other = __shfl_xor_sync(0xffffffffu, v, offset);
    v = is_max ? fmaxf(v, other) : v + other;
  }
  return v;
}

// The max or sum of `v` over the block (blockDim.x a multiple of 32), the
// same in every thread. `shared` holds 32 floats.
__device__ float block_reduce(float v, bool is_max, float* shared) {
  const float identity = is_max ? -CUDART_INF_F : 0.f;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  v = warp_reduce(v, is_max);
  __syncthreads();  // every thread has read the previous result
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = warp_reduce(lane < warps ? shared[lane] : identity, is_max);
    if (lane == 0) shared[0] = v;
  }
  __syncthreads();
  return shared[0];
}

// Rows may be written in place (probs == scores): each element is read
// for the last time by the thread that writes it, after both reductions.
template <class Out>
__global__ void masked_softmax_kernel(const float* scores, AttentionMask mask, AttentionDims d, Out* probs,
                                      int64_t rows) {
  __shared__ float shared[32];
  const int64_t seq = d.seq;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const int64_t s = row % seq, b = row / (d.heads * seq);
    const float* x = scores + row * seq;
    Out* p = probs + row * seq;
    float mx = -CUDART_INF_F;
    for (int64_t t = threadIdx.x; t < seq; t += blockDim.x)
      mx = fmaxf(mx, x[t] + attention_mask_value(mask, d.batch, seq, b, s, t));
    mx = block_reduce(mx, true, shared);
    float sum = 0.f;
    for (int64_t t = threadIdx.x; t < seq; t += blockDim.x)
      sum += expf(x[t] + attention_mask_value(mask, d.batch, seq, b, s, t) - mx);
    sum = block_reduce(sum, false, shared);
    for (int64_t t = threadIdx.x; t < seq; t += blockDim.x)
      p[t] = from_acc<Out>(expf(x[t] + attention_mask_value(mask, d.batch, seq, b, s, t) - mx) / sum);
  }
}

bool attention_type(int32_t dtype) { return dtype == LOOM_DTYPE_FLOAT || dtype == LOOM_DTYPE_FLOAT16; }

// f(T{}) with T float or __half (callers check attention_type first).
template <class F>
void dispatch_attention(int32_t dtype, F&& f) {
  if (dtype == LOOM_DTYPE_FLOAT16) f(__half{});
  else f(float{});
}

}  // namespace

cudaError_t launch_split_qkv(int32_t dtype, const void* qkv, const void* bias, const AttentionDims& d, void* q,
                             void* k, void* v, cudaStream_t stream) {
  if (!attention_type(dtype)) return cudaErrorInvalidValue;
  const int64_t n = d.batch * d.seq * d.width();
  if (n == 0) return cudaSuccess;
  dispatch_attention(dtype, [&](auto tag) {
    using T = decltype(tag);
    split_qkv_kernel<T><<<grid_for(n), kBlockThreads, 0, stream>>>(static_cast<const T*>(qkv),
                                                                   static_cast<const T*>(bias), d, static_cast<T*>(q),
                                                                   static_cast<T*>(k), static_cast<T*>(v), n);
  });
  return cudaGetLastError();
}

cudaError_t launch_masked_softmax(int32_t dtype, const float* scores, const AttentionMask& mask,
                                  const AttentionDims& d, void* probs, cudaStream_t stream) {
  if (!attention_type(dtype)) return cudaErrorInvalidValue;
  const int64_t rows = d.batch * d.heads * d.seq;
  if (rows == 0) return cudaSuccess;
  const int64_t threads = d.seq >= kBlockThreads ? kBlockThreads : (d.seq + 31) / 32 * 32;
  const int64_t cap = 65535LL * 16;
  const unsigned blocks = static_cast<unsigned>(rows < cap ? rows : cap);
  dispatch_attention(dtype, [&](auto tag) {
    using T = decltype(tag);
    masked_softmax_kernel<T><<<blocks, static_cast<unsigned>(threads), 0, stream>>>(scores, mask, d,
                                                                                    static_cast<T*>(probs), rows);
  });
  return cudaGetLastError();
}

cudaError_t launch_merge_heads(int32_t dtype, const void* context, const AttentionDims& d, void* y,
                               cudaStream_t stream) {
  if (!attention_type(dtype)) return cudaErrorInvalidValue;
  const int64_t n = d.batch * d.seq * d.dv();
  if (n == 0) return cudaSuccess;
  dispatch_attention(dtype, [&](auto tag) {
    using T = decltype(tag);
    merge_heads_kernel<T><<<grid_for(n), kBlockThreads, 0, stream>>>(static_cast<const T*>(context), d,
                                                                     static_cast<T*>(y), n);
  });
  return cudaGetLastError();
}

}  // namespace loom::cuda
