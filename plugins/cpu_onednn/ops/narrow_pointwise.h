// 1x1 convolutions oneDNN 2.6 computes poorly, as host steps on AVX-512
// machines (host_kernels/pointwise_1x1.h): narrow outputs (8, 16, 24 or 40
// channels), expansions (at most 64 input channels, a multiple of 16
// outputs) and small maps (at most 256 pixels, a multiple of 32 outputs,
// up to 2 MB of weights).
//
// Fed by rows: when its input is the result of the depthwise step just
// built (ops/depthwise.h) and nothing else reads it, the step computes that
// convolution itself, a band of about 32 KB of rows at a time per thread,
// and reads the band from cache at once: the map is never written whole
// and read back. Expansions are built only when they compute every post-op
// oneDNN would fuse (residual Add, clamp); their rows feed a banded
// depthwise step after them (ops/depthwise.h). Measurements:
// bench/results/2026-11-28-cpu-onednn-host-kernels.md.
#pragma once

#include <optional>

#include "ops/op_builders.h"

namespace loom::onednn {

// Builds Conv node `n` (and a following full-shape Add, then a clamp,
// Relu or Clip with constant bounds, from `chain`) as the step when it
// applies: the CPU has AVX-512, f32, batch any, group 1, a 1x1 kernel with
// stride 1, no padding or dilation, constant weights (and bias), the input
// already channels-last, and output channels 8, 16, 24 or 40, or else
// `chain` absorbed up to oneDNN's post-ops and either at most 64 input
// channels and a multiple of 16 output channels or at most 256 pixels, a
// multiple of 32 output channels and 2 MB of weights. Returns the number of
// chain nodes absorbed, or nullopt (nothing built).
std::optional<size_t> build_narrow_pointwise(ProgramBuilder& b, const NodeSpec& n, const Chain& chain);

}  // namespace loom::onednn
