// ONNX element-wise ops as oneDNN eltwise / binary algorithms. Shared by the
// claim checks (is the op expressible?) and the program builder (standalone
// primitives and post-ops).
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <optional>
#include <utility>
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

// The bounds [lo, hi] a step clamps to, when it is a clamp (Relu: [0, inf];
// Clip: its bounds); nullopt for any other step. Host kernels fuse these.
std::optional<std::pair<float, float>> clamp_bounds(const EltwiseStep& step);

// com.microsoft BiasGelu(A, B) and FastGelu(X, bias): A + B, then these
// eltwise steps (gelu_erf / gelu_tanh). nullopt for any other node (FastGelu
// without a bias is a plain unary op: see eltwise_steps_for).
std::optional<std::vector<EltwiseStep>> bias_activation_for(const NodeSpec& node);

// Whether the node is in ONNX Runtime's contrib domain.
inline bool is_ms_domain(const NodeSpec& node) { return node.domain == "com.microsoft"; }

// The binary algorithm of a two-input Add/Sub/Mul/Div/Max/Min, or nullopt.
std::optional<dnnl::algorithm> binary_algorithm_for(const NodeSpec& node);

// Whether swapping the binary operands keeps the result.
bool is_commutative(dnnl::algorithm alg);

}  // namespace loom::onednn
