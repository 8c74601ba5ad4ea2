// Depthwise 3x3 convolutions (one filter per channel, channels a multiple of
// 16, NHWC) as a host step, with bias and a clamp (Relu / Clip) fused.
//
// oneDNN 2.6 runs them through its brdgmm kernel, which in MobileNetV2 ran
// at 23-47 GFLOP/s (1.0-1.1 ms of a 7.5 ms run). The step keeps the nine
// per-channel filter vectors in registers and computes a strip of outputs of
// one row per pass, reusing each loaded input vector for every tap that
// reads it: ~20 % less time on MobileNetV2's depthwise layers (measured
// standalone against oneDNN on the same shapes and data). Output rows are
// split across the EP's threads.
//
// Banded: when the input is a large map (3 MB or more) that a 1x1
// convolution just computed and nothing else reads (MobileNetV2's 112x112x96
// expansion), the two run as one step, band by band of output rows: the
// convolution (oneDNN's primitive, or the expansion step's kernel when that
// built it, ops/narrow_pointwise.h) computes the few expanded rows a band
// needs into a buffer that stays in the core's L2, and the depthwise kernel
// reads them from there. The map is
// never written whole (4.8 MB written and read back, much of it from DRAM
// once a run's weights have streamed through the cache). Measured on
// MobileNetV2, same process, alternating runs: 0-3 % less time per run at 1
// and 2 threads; banding the 1.8 MB maps as well gained nothing.
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
