// Normalisation launchers (kernels/norm.cu): LayerNormalization,
// SimplifiedLayerNormalization (RMS), InstanceNormalization, the
// com.microsoft Skip(Simplified)LayerNormalization and
// EmbedLayerNormalization. Each normalised row is one block; statistics are
// two-pass (mean, then mean of squared deviations) in float (double for
// double). Pointers are device memory; work is queued on `stream`. Each
// returns the launch error, if any, or cudaErrorInvalidValue for a type it
// lacks (float, float16, double).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/index_math.h"

namespace loom::cuda {

// Rows of `cols` elements, row r's value at column c being
//   v = x[r * cols + c] (+ skip[(r * cols + c) % skip_size]) (+ bias[c]),
// normalised as y = (v - mean) * inv_std * gamma + beta, where
// inv_std = 1 / sqrt(mean((v - mean)^2) + epsilon) (simplified: mean = 0,
// no beta). gamma and beta are read at gamma_map.offset(c) (rank 0: at c),
// or at r % channels when channels > 0 (InstanceNormalization). All of x,
// skip, bias, gamma, beta, y, sum have the element type.
struct NormRows {
  int64_t rows = 0, cols = 0;
  const void* x = nullptr;
  const void* skip = nullptr;  // optional; skip_size a multiple of cols
  int64_t skip_size = 0;
  const void* bias = nullptr;  // optional, [cols]
  const void* gamma = nullptr;
  const void* beta = nullptr;  // optional
  StridedMap gamma_map, beta_map;
  int64_t channels = 0;
  bool simplified = false;
  float epsilon = 1e-5f;
  void* y = nullptr;
  float* mean = nullptr;     // optional, [rows] (0 when simplified)
  float* inv_std = nullptr;  // optional, [rows]
  void* sum = nullptr;       // optional, [rows, cols]: v itself
};

cudaError_t launch_norm_rows(int32_t dtype, const NormRows& p, cudaStream_t stream);

// EmbedLayerNormalization: row r = b * seq + s of the [batch, seq, hidden]
// output is LayerNorm(word[ids[r]] + position[p] (+ segment[segment_ids[r]]))
// with p = position_ids[r] (position_ids[s] when position_broadcast), or s
// without position_ids. An id out of its table's range makes the row NaN.
// mask_index[b] (optional) counts mask[b, :] == 1 (0 without a mask).
// Tables, gamma, beta, y and sum have the element type; ids and mask int32.
struct EmbedRows {
  int64_t batch = 0, seq = 0, hidden = 0;
  const int32_t* input_ids = nullptr;
  const int32_t* segment_ids = nullptr;   // optional, with segment
  const int32_t* position_ids = nullptr;  // optional
  bool position_broadcast = false;
  const void* word = nullptr;
  const void* position = nullptr;
  const void* segment = nullptr;  // optional
  int64_t word_rows = 0, position_rows = 0, segment_rows = 0;
  const void* gamma = nullptr;
  const void* beta = nullptr;
  float epsilon = 1e-12f;
  const int32_t* mask = nullptr;  // optional
  void* y = nullptr;
  int32_t* mask_index = nullptr;  // optional, [batch]
  void* sum = nullptr;            // optional, [batch, seq, hidden]
};

cudaError_t launch_embed_layer_norm(int32_t dtype, const EmbedRows& p, cudaStream_t stream);

}  // namespace loom::cuda
