// Depthwise 3x3 convolutions as a host step (host_kernels/depthwise_3x3.h),
// with bias and a clamp (Relu / Clip) fused.
//
// Banded: when the input is a large map (3 MB or more) that a 1x1
// convolution just computed and nothing else reads, the two run as one
// step, band by band of output rows: the convolution (oneDNN's primitive,
// or the expansion step's kernel when that built it, ops/narrow_pointwise.h)
// computes the few expanded rows a band needs into a buffer that stays in
// the core's L2, and the depthwise kernel reads them from there; the map is
// never written whole. Measurements: bench/results/2026-11-28-cpu-onednn-host-kernels.md.
#pragma once

#include <optional>

#include "ops/op_builders.h"

namespace loom::onednn {

// Builds Conv node `n` (and the clamp that may follow it in `chain`) as the
// depthwise step when it applies: f32, group == input channels == output
// channels, a multiple of 16 of them, constant 3x3 weights (and bias),
// strides 1 or 2, no dilation, and `chain` empty or one clamp (Relu, Clip
// with constant bounds). Returns the number of chain nodes absorbed, or
// nullopt (nothing built) when it does not apply.
std::optional<size_t> build_depthwise_3x3(ProgramBuilder& b, const NodeSpec& n, const Chain& chain);

}  // namespace loom::onednn
