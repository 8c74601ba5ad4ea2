// ONNX element-wise ops as oneDNN eltwise / binary algorithms. Shared by the
// claim checks (is the op expressible?) and the program builder (standalone
// primitives and post-ops).
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <optional>
#include <vector>

#include "node_spec.h"

namespace loom::onednn {

struct EltwiseStep {
  dnnl::algorithm alg;
  float alpha = 0.f;
  float beta = 0.f;
};

// The eltwise steps that compute a unary ONNX op (applied in order), or
// nullopt when the node is not a unary op this EP expresses (e.g. a Clip
// whose bounds are not constant).
std::optional<std::vector<EltwiseStep>> eltwise_steps_for(const NodeSpec& node);

// The binary algorithm of a two-input Add/Sub/Mul/Div/Max/Min, or nullopt.
std::optional<dnnl::algorithm> binary_algorithm_for(const NodeSpec& node);

// Whether swapping the binary operands keeps the result.
bool is_commutative(dnnl::algorithm alg);

}  // namespace loom::onednn
