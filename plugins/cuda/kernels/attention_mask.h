// Index arithmetic and mask semantics of com.microsoft Attention, shared by
// the host (validation, and the CPU tests) and the device kernels
// (kernels/attention.cu). Plain C++ under g++; __host__ __device__ under
// nvcc. Semantics follow the reference EP (plugins/reference/kernels/
// contrib_attention.cpp, ONNX Runtime's PrepareMask): the mask value of a
// score is ADDED to scale * Q.K before the softmax.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/index_math.h"

namespace loom::cuda {

// B batches of S tokens, N heads of H (Q and K) and Hv (V) channels. The
// projected rows are [Q | K | V] = [N*H | N*H | N*Hv] wide.
struct AttentionDims {
  int64_t batch = 0, seq = 0, heads = 0, head = 0, head_v = 0;

  LOOM_HD int64_t dq() const { return heads * head; }
  LOOM_HD int64_t dv() const { return heads * head_v; }
  LOOM_HD int64_t width() const { return 2 * heads * head + heads * head_v; }
};

// Where column c of projected row (b, s) goes: Q, K ([B, N, S, H]) or V
// ([B, N, S, Hv]), at `offset` in that tensor.
struct QkvSlot {
  int which = 0;  // 0 Q, 1 K, 2 V
  int64_t offset = 0;
};

LOOM_HD QkvSlot qkv_slot(const AttentionDims& d, int64_t b, int64_t s, int64_t c) {
  QkvSlot slot;
  const int64_t dq = d.dq();
  int64_t size = d.head;
  if (c < dq) {
    slot.which = 0;
  } else if (c < 2 * dq) {
    slot.which = 1;
    c -= dq;
  } else {
    slot.which = 2;
    c -= 2 * dq;
    size = d.head_v;
  }
  const int64_t n = c / size, h = c - n * size;
  slot.offset = ((b * d.heads + n) * d.seq + s) * size + h;
  return slot;
}

// The element of the per-head context [B, N, S, Hv] that element `i` of the
// output [B, S, N * Hv] takes.
LOOM_HD int64_t merged_source(const AttentionDims& d, int64_t i) {
  const int64_t dv = d.dv();
  const int64_t row = i / dv, c = i - row * dv;
  const int64_t b = row / d.seq, s = row - b * d.seq;
  const int64_t n = c / d.head_v, h = c - n * d.head_v;
  return ((b * d.heads + n) * d.seq + s) * d.head_v + h;
}

// The mask_index forms: none (also a [B, 1] or [1, 1] dummy), 1-D [B] key
// lengths (keys t >= end are masked), 1-D [2B] ends then starts (also t <
// start), 2-D [B, T] per key (0 masks), 3-D [B, S, T] per query and key.
enum class MaskKind : int { kNone, kEnd, kEndStart, kKeys, kFull };

constexpr float kAttentionLowest = -3.402823466e+38f;

struct AttentionMask {
  MaskKind kind = MaskKind::kNone;
  const int32_t* data = nullptr;  // int32 mask_index (device memory on the device)
  float filter = -10000.f;        // mask_filter_value
  bool unidirectional = false;    // keys after the query get the lowest float
};

LOOM_HD int64_t attention_clamp(int64_t v, int64_t hi) { return v < 0 ? 0 : v > hi ? hi : v; }

// What is added to the score of query s against key t in batch b (B
// batches, S queries and S keys: no past).
LOOM_HD float attention_mask_value(const AttentionMask& m, int64_t batch, int64_t seq, int64_t b, int64_t s,
                                   int64_t t) {
  if (m.unidirectional && t > s) return kAttentionLowest;
  switch (m.kind) {
    case MaskKind::kEnd:
      return t >= attention_clamp(m.data[b], seq) ? m.filter : 0.f;
    case MaskKind::kEndStart:
      return (t >= attention_clamp(m.data[b], seq) || t < attention_clamp(m.data[batch + b], seq)) ? m.filter : 0.f;
    case MaskKind::kKeys:
      return m.data[b * seq + t] > 0 ? 0.f : m.filter;
    case MaskKind::kFull:
      return m.data[(b * seq + s) * seq + t] > 0 ? 0.f : m.filter;
    default:
      return 0.f;
  }
}

// The kind of a mask_index of `dims` for B batches of S tokens; an empty
// `why` when supported, else the reason.
inline MaskKind attention_mask_kind(const std::vector<int64_t>& dims, int64_t batch, int64_t seq, std::string* why) {
  auto shape = [&] {
    std::string s = "[";
    for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
    return s + "]";
  };
  why->clear();
  if (dims.size() == 1) {
    if (dims[0] == batch) return MaskKind::kEnd;
    if (dims[0] == 2 * batch) return MaskKind::kEndStart;
  } else if (dims.size() == 2) {
    if (dims[0] == batch && dims[1] == seq) return MaskKind::kKeys;
    if ((dims[0] == batch || dims[0] == 1) && dims[1] == 1) return MaskKind::kNone;
  } else if (dims.size() == 3) {
    if (dims[0] == batch && dims[1] == seq && dims[2] == seq) return MaskKind::kFull;
  }
  *why = "mask_index " + shape() + " is none of [B], [2B], [B, S], [B, S, S] for B = " + std::to_string(batch) +
         ", S = " + std::to_string(seq);
  return MaskKind::kNone;
}

}  // namespace loom::cuda
