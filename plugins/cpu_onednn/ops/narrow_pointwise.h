// 1x1 convolutions oneDNN 2.6 computes poorly, as host steps on AVX-512
// machines: 16k + 8 output channels (MobileNetV2's 24), or 16; at most 64
// input channels and a multiple of 16 output channels (expansions); or at
// most 256 pixels with a multiple of 32 output channels (small maps).
//
// oneDNN 2.6's brgconv_1x1 computes the last 8 channels with masked 16-lane
// vectors, so a quarter of its FMA work on 24 channels is wasted: 84-86
// GFLOP/s on MobileNetV2's 96->24 and 144->24 layers (56x56) against
// 106-115 on its other 1x1 layers. Zen 4 runs 8-lane FMAs at the same FLOP
// rate as 16-lane ones, so this step computes 8 rows x (k 16-lane + one
// 8-lane) accumulators: 97-110 GFLOP/s on the same shapes, measured
// standalone with the same data.
//
// On 16 output channels oneDNN's kernel is slow too: MobileNetV2's 32->16
// layer (112x112) took 178-240 us in the model against 142 for this step's
// 8 x 1 tiles at 1 thread, 126 against 80 at 2 (per-step timer, alternating
// processes); the whole model moved by less than the noise (same-process
// A/B within 1.5 % either way). On 32 and 64 channels oneDNN matched or beat
// this step, so they stay with it.
//
// Fed by rows: when its input is the result of the depthwise step just
// built (ops/depthwise.h) and nothing else reads it, the step computes that
// convolution itself, a band of about 32 KB of rows at a time per thread,
// and reads the band from cache at once: the map (MobileNetV2's 112x112x32
// and 56x56x144, 1.6-1.8 MB) is never written whole and read back. Per-step
// timer, 1 thread: 245 us against 268 for the two steps on the first, 314
// against 369 on the second.
//
// Expansions: with few input channels a tile's k loop is short, and
// oneDNN 2.6 reached 64-80 GFLOP/s on MobileNetV2's 16->96, 24->144 and
// 32->192 layers. This step computes R rows x Q vectors of outputs (4 x 6,
// 8 x 3, ...) per pass, the weights (at most 256 KB) staying in cache: per-
// step timer, 1 thread, 533 us against 643 for the banded 112x112 block
// (expansion and depthwise), 225-230 against 249-257 on the 24->144 layers,
// 98-99 against 106-110 on the 32->192 ones; whole model, same process,
// alternating runs: 1.2-3.1 % less time per run at 1 thread, 2.6-5.2 % at 2.
// It is built only when it computes every post-op oneDNN would fuse
// (residual Add, clamp): PP-OCR det's expansions followed by HardSwish or
// per-channel Mul / Add became separate passes that cost more than it saved.
// Its rows feed a banded depthwise step after it (ops/depthwise.h).
//
// Small maps (MobileNetV2's 7x7 and 14x14 stages, up to 1.6 MB of weights a
// layer, read from DRAM each run): the weights are packed in contiguous
// chunks of 32 or 48 output channels, each chunk computing its pixels while
// its weights stay in cache; threads split the chunks on 7x7 maps, the rows
// on larger ones. Hot, standalone: 100-109 GFLOP/s on the 7x7 shapes. Whole
// model, same process, alternating runs: the 7x7 layers took 3.2-3.7 % less
// time per run at 1 thread, 1.0-1.8 % at 2; the 14x14 ones another 0.2-2.2
// % at 1 and 2.0-2.5 % at 2 (ResNet-50's layer3: 2.1-2.6 %). Same post-op
// rule as expansions; up to 2 MB of weights (ResNet-50's 4 MB layer4 ran
// 1.3-1.9 % slower this way).
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
