// Depthwise 3x3 convolution of channels-last float32 maps (one filter per
// channel, channels a multiple of 16), with the bias and a clamp fused: raw
// pointers and geometry, no oneDNN. The cpu_onednn builder picks it
// (ops/depthwise.h); bench/results/2026-11-28-cpu-onednn-host-kernels.md
// has what it was measured against.
#pragma once

#include <cstdint>
#include <vector>

namespace loom::onednn::host_kernels {

constexpr int64_t kDepthwiseLanes = 16;  // channels per vector; the kernel needs a multiple of it
constexpr int kDepthwiseTaps = 9;

// Sizes in elements; rows are numbered image * out_h + oy over the batch.
struct DepthwiseGeometry {
  int64_t h, w, c, out_h, out_w, stride_y, stride_x, pad_top, pad_left;
  float lo, hi;  // the fused clamp (-inf, inf when none)
  // The input row the input pointer points at (an image's rows
  // [first_row, ...) are read from there): 0, except for a band buffer.
  int64_t first_row = 0;
  // The output row the output pointer points at: 0, except when a caller
  // computes a band of rows into a buffer of its own.
  int64_t out_first_row = 0;
};

// Filters [C][1][3][3] as [C / 16][9 taps][16 lanes]: one vector load per tap.
std::vector<float> pack_depthwise_3x3_filters(const std::vector<float>& weights, int64_t channels);

// Output rows [r0, r1) of the map: `in` NHWC (from row g.first_row of each
// image), `packed` from pack_depthwise_3x3_filters, `bias` C floats, `out`
// NHWC from row g.out_first_row. Strides 1 or 2 in x.
void depthwise_3x3_rows(const float* in, const float* packed, const float* bias, float* out,
                        const DepthwiseGeometry& g, int64_t r0, int64_t r1);
// The same split across `threads` OpenMP teams.
void depthwise_3x3_rows_parallel(int threads, const float* in, const float* packed, const float* bias, float* out,
                                 const DepthwiseGeometry& g, int64_t r0, int64_t r1);

}  // namespace loom::onednn::host_kernels
