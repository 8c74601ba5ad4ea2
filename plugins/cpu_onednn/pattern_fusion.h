// Graph patterns inside a claimed partition that oneDNN computes as one
// algorithm, rewritten before fusion planning so that the result can become
// a single post-op of the primitive before it.
#pragma once

#include <map>
#include <set>
#include <vector>

#include "partition_spec.h"

namespace loom::onednn {

// Replaces each HardSwish written out by exporters with one HardSwish node
// (oneDNN eltwise_hardswish, x * min(max(x + 3, 0), 6) / 6 in 2.6 — ONNX's
// HardSwish, alpha = 1/6, beta = 1/2):
//   x * Clip(x + 3, 0, 6) / 6, with the Mul and the Div (or Mul by 1/6) in
//   either order and commutative operands either way round;
//   x * HardSigmoid(x) with alpha = 1/6, beta = 1/2.
// Only when every intermediate has that one consumer and is not a partition
// output. The new node takes the name of the node it replaces last, with the
// pattern appended, so errors still point at the graph.
void fuse_hardswish_patterns(PartitionSpec& spec);

// DequantizeLinear -> MaxPool -> QuantizeLinear with the same scalar scale
// and zero point on both sides becomes one MaxPool on the int8 data (u8 /
// s8 in, same type out): dequantization is increasing and Q(DQ(v)) = v, so
// the result is exact, and the float tensor and two conversions go away.
// Only when the DQ's and the MaxPool's results have that one consumer, are
// not partition outputs, and the MaxPool has no Indices output.
void fuse_quantized_max_pool_patterns(PartitionSpec& spec);

// Mish written out, x * Tanh(Softplus(x)) (torch's export of F.mish
// before opset 18), becomes one Mish node (oneDNN eltwise_mish): oneDNN's
// soft_relu alone loses all relative precision below x = -10 (a value of
// -2e-11 came out as +5e-5), eltwise_mish stays within 5e-8 absolute of the
// reference EP. Same conditions as above (mish_pattern.cpp).
void fuse_mish_patterns(PartitionSpec& spec);

// Replaces each matched pattern by its new node (placed at the index of the
// pattern's last node, which keeps the order topological) and drops the
// pattern's other nodes; the pattern rewrites above share it.
void apply_rewrites(PartitionSpec& spec, std::map<size_t, NodeSpec>& replacement, const std::set<size_t>& removed);

}  // namespace loom::onednn
