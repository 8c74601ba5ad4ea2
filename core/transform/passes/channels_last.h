// The loom.nhwc ops: what transform/channels_last.cpp rewrites 2-D
// convolutions and pools into for providers that prefer channels-last
// data. Each means its namesake (same attributes, same arithmetic) with
// its 4-D activations in NHWC instead of NCHW:
//   Conv, FusedConv   X [N,H,W,C], W [M,kH,kW,C/group] (OHWI), B [M],
//                     (FusedConv) Z [N,oH,oW,M] -> Y [N,oH,oW,M]
//   MaxPool, AveragePool (no Indices output), GlobalAveragePool,
//   GlobalMaxPool     X [N,H,W,C] -> Y [N,oH,oW,C]
// Loom-internal: the session makes them, a provider claims them only where
// it prefers them (reference: option prefer_nhwc; cuda: prefer_nhwc).
#pragma once

#include "loom/tensor.h"

namespace loom::transform {

constexpr char kNhwcDomain[] = "loom.nhwc";

// W [M, C, kH, kW] (OIHW) reordered to [M, kH, kW, C] (OHWI); any element
// type. Fails on a weight that is not 4-D.
Expected<Tensor> ohwi_weight(const Tensor& w);

}  // namespace loom::transform
