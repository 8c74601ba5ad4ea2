// The ops whose float32 compute the float16 conversion
// (transform/float16_conversion.h) moves to float16, and which of their
// inputs and outputs carry the converted element type: the ones bound to the
// op's main type parameter (ONNX's "T"). Everything else (indices, shapes,
// masks, LayerNormalization's float statistics) keeps its type.
//
// The list is deliberately an allow list, like ONNX Runtime's float16
// converter's block list turned around: convolutions, products, normalizations
// that accumulate in float, element-wise arithmetic and activations, pooling
// and data movement. Left out on purpose: reductions and Pow (sums and
// squares overflow float16's 65504), Exp/Log, Resize and Upsample (their
// scales), Range, TopK, CumSum, NonMaxSuppression and Min/Max (as ONNX
// Runtime's converter), and every op with a subgraph.
#pragma once

#include <string>
#include <vector>

namespace loom::transform {

struct Float16OpRule {
  std::vector<int> inputs;   // positions bound to T; kFloat16AllPositions: every position
  std::vector<int> outputs;  // likewise for outputs
};
inline constexpr int kFloat16AllPositions = -1;

// The rule for domain.op ("" is the ONNX domain), or NULL when the op stays float32.
const Float16OpRule* float16_rule(const std::string& domain, const std::string& op);

// Whether position `index` of a node with `count` inputs (or outputs) is
// bound to T under `positions`.
bool float16_position(const std::vector<int>& positions, size_t index);

}  // namespace loom::transform
