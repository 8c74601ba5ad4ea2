// Decides which trailing element-wise / binary nodes become post-ops of the
// node before them. Purely structural: the op builders may still fuse fewer
// (shapes oneDNN rejects), and then build the rest standalone.
#pragma once

#include <vector>

#include "partition_spec.h"

namespace loom::onednn {

// One node to build, with the chain of nodes it may absorb as post-ops.
struct BuildUnit {
  size_t node;
  std::vector<size_t> chain;  // indices into PartitionSpec::nodes, in chain order
};

// Every node appears in exactly one unit (as its node or in its chain). A
// chain continues through a value only when it has exactly one consumer
// inside the partition and is not needed outside it; a binary node joins
// with the chain value as its first operand (either operand when
// commutative), the other operand produced anywhere else.
//
// Quantized residuals are planned first: for
//   QLinearConv -> y -> DequantizeLinear -> Add <- DequantizeLinear <- r
//   Add -> [Relu] -> QuantizeLinear -> out
// the QLinearConv's chain is {DQ(y), DQ(r), Add, [Relu], Q}, in that order
// (the second DQ is the one other node a chain takes that does not read the
// chain value: it reads r, produced anywhere else). Every intermediate
// (y, both DQ results, the Add's and the Relu's) must have that one
// consumer and not be a partition output; r may have other readers. When
// both DQs read QLinearConv outputs, the later one in node order is the
// anchor (its r is then more often computed and free to overwrite).
// build_qlinear_conv checks the parameters and either absorbs the whole
// chain or none of it.
std::vector<BuildUnit> plan_fusion(const PartitionSpec& spec);

}  // namespace loom::onednn
