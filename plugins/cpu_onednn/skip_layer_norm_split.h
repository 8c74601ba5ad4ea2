// SkipLayerNormalization(input, skip, gamma, beta, bias) with a full-shape
// skip is split, before fusion planning, into the nodes it stands for:
//   t = Add(input, bias); s = Add(t, skip); y = LayerNormalization(s)
// so that when `input` comes from a MatMul / Conv the two adds become its
// post-ops (binary add of the bias, sum of the residual) instead of a
// separate binary primitive over the whole activation. Output 3 (the sum),
// when wanted, is the second Add's output. A skip known to broadcast
// ([1, S, H] or [S, H] for a known B > 1) keeps the single-node builder
// (ops/contrib_norm.cpp).
#pragma once

#include "partition_spec.h"

namespace loom::onednn {

void split_skip_layer_norms(PartitionSpec& spec);

}  // namespace loom::onednn
