// Output dims of windowed ops (Conv, FusedConv, QLinearConv, ConvInteger,
// MaxPool, AveragePool, LpPool) for
// the registry's shape inference (shapes.h). A spatial dim named by a
// real symbol gets a canonical expression of it, so two branches that shrink
// "height" the same way (a 3x3 stride-2 pad-1 conv and a 1x1 stride-2 conv
// both give "(height-1)//2+1") carry equal symbols, and a residual Add of
// the two is known to add equal shapes. Dims ONNX's inference gave up on
// ("unk__N") stay unknown.
#pragma once

#include <optional>
#include <vector>

#include "ir/graph.h"

namespace loom::opreg {

// The output shape of `n` from X's shape `x` and, for convolutions, W's
// shape `w` (channels and kernel); nullopt when an attribute or dim it needs
// is missing or odd. Only NOTSET and VALID padding, and SAME_* with stride 1
// or known dims, are expressed.
std::optional<std::vector<DimInfo>> window_output_shape(const ir::Node& n, const std::vector<DimInfo>& x,
                                                        const std::optional<std::vector<DimInfo>>& w);

}  // namespace loom::opreg
