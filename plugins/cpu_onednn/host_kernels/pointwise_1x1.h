// 1x1 convolutions of channels-last float32 maps as register-blocked
// AVX-512 kernels (raw pointers and geometry, no oneDNN), for the shapes
// oneDNN 2.6 computes poorly: narrow outputs (8, 16, 24 or 40 channels),
// expansions (at most 64 input channels, a multiple of 16 outputs, weights
// that stay in cache) and small maps (at most 256 pixels, a multiple of 32
// outputs, up to 2 MB of weights). Bias, a residual and a clamp are fused.
// The cpu_onednn builder picks them (ops/narrow_pointwise.h) only where the
// CPU has AVX-512; bench/results/2026-11-28-cpu-onednn-host-kernels.md has
// what they were measured against.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

namespace loom::onednn::host_kernels {

struct PointwiseGeometry {
  int64_t k, n;  // input channels; output channels
  float lo, hi;  // the fused clamp (-inf, inf when none)
};

// Output rows (pixels) [m0, m1): out[m][0..n) = clamp(in[m][0..k) x weights
// + bias (+ residual[m])), `weights` k x n row-major, bias n floats.
using PointwiseRowsFn = void (*)(const float* in, const float* weights, const float* bias, const float* residual,
                                 float* out, const PointwiseGeometry& g, int64_t m0, int64_t m1);

// A kernel without and with the residual: the residual is a template
// argument, as a run-time test in the tile made GCC keep the accumulators on
// the stack across it.
struct PointwiseKernels {
  PointwiseRowsFn plain = nullptr, residual = nullptr;
};

enum class PointwiseKind { kNarrow, kExpand };

// Callers split a step's rows across threads at multiples of this (of every
// kernel's rows per tile), so only the last rows run as single-row tiles.
constexpr int64_t kPointwiseSplitRows = 24;

// The kernels for k input and n output channels and which kind they are, or
// nullopt: narrow outputs (16 Q + 8 with Q < 3, or 16) first, then
// expansions (k <= 64, n a multiple of 16, k x n weights within 256 KB).
std::optional<std::pair<PointwiseKind, PointwiseKernels>> pointwise_kernels_for(int64_t k, int64_t n);

// Small maps: weights packed per column chunk ([chunk][k][chunk_channels],
// one contiguous block a chunk); output rows [m0, m1) of chunks [c0, c1).
using PointwiseChunksFn = void (*)(const float* in, const float* packed, const float* bias, const float* residual,
                                   float* out, const PointwiseGeometry& g, int64_t m0, int64_t m1, int64_t c0,
                                   int64_t c1);
struct PointwiseChunkKernels {
  PointwiseChunksFn plain = nullptr, residual = nullptr;
  int64_t chunk_channels = 0;
};
// Rows a small-map tile computes at once.
constexpr int kPointwiseSmallMapRows = 7;
// Callers split the chunks across threads on maps up to this many pixels
// (each thread then reads the whole input, a few KB per channel), and the
// rows on larger ones.
constexpr int64_t kChunkSplitMaxPixels = 64;

// The small-map kernels for k input and n output channels (a multiple of
// 32) and `pixels`, or nullopt.
std::optional<PointwiseChunkKernels> pointwise_chunk_kernels_for(int64_t k, int64_t n, int64_t pixels);

}  // namespace loom::onednn::host_kernels
