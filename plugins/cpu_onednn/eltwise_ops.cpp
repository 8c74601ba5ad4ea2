#include "eltwise_ops.h"

#include <cfloat>
#include <cmath>
#include <limits>

namespace loom::onednn {
namespace {

using dnnl::algorithm;

std::optional<float> constant_scalar(const NodeSpec& n, size_t input) {
  auto it = n.small_constants.find(input);
  if (it == n.small_constants.end() || it->second.size() != 1) return std::nullopt;
  return static_cast<float>(it->second[0]);
}

// Clip bounds: attributes before opset 11, optional constant inputs after.
std::optional<std::vector<EltwiseStep>> clip_steps(const NodeSpec& n) {
  float lo = -FLT_MAX, hi = FLT_MAX;
  if (n.opset < 11) {
    lo = n.attr_float("min", lo);
    hi = n.attr_float("max", hi);
  } else {
    for (size_t i = 1; i <= 2; ++i) {
      if (!n.has_input(i)) continue;
      auto v = constant_scalar(n, i);
      if (!v) return std::nullopt;  // a bound computed at run time
      (i == 1 ? lo : hi) = *v;
    }
  }
  if (lo > hi) return std::nullopt;  // ONNX leaves this case to the reference semantics
  return std::vector<EltwiseStep>{{algorithm::eltwise_clip, lo, hi}};
}

}  // namespace

std::optional<std::vector<EltwiseStep>> eltwise_steps_for(const NodeSpec& n) {
  using V = std::vector<EltwiseStep>;
  // ONNX Runtime's contrib activations (reference: contrib_gelu.cpp).
  if (is_ms_domain(n)) {
    if (n.op_type == "Gelu") return V{{algorithm::eltwise_gelu_erf}};
    if (n.op_type == "FastGelu" && !n.has_input(1)) return V{{algorithm::eltwise_gelu_tanh}};
    // QuickGelu: x * sigmoid(alpha x), oneDNN's swish.
    if (n.op_type == "QuickGelu") return V{{algorithm::eltwise_swish, n.attr_float("alpha", 1.702f), 0.f}};
    return std::nullopt;
  }
  if (!n.domain.empty() && n.domain != "ai.onnx") return std::nullopt;
  const std::string& op = n.op_type;
  if (op == "Relu") return V{{algorithm::eltwise_relu, 0.f, 0.f}};
  if (op == "LeakyRelu") return V{{algorithm::eltwise_relu, n.attr_float("alpha", 0.01f), 0.f}};
  if (op == "Sigmoid") return V{{algorithm::eltwise_logistic}};
  if (op == "Tanh") return V{{algorithm::eltwise_tanh}};
  if (op == "Elu") return V{{algorithm::eltwise_elu, n.attr_float("alpha", 1.f), 0.f}};
  if (op == "Selu")
    return V{{algorithm::eltwise_elu, n.attr_float("alpha", 1.67326319217681884765625f), 0.f},
             {algorithm::eltwise_linear, n.attr_float("gamma", 1.05070102214813232421875f), 0.f}};
  if (op == "Exp") return V{{algorithm::eltwise_exp}};
  // Log is not claimed: oneDNN's approximation is off by ~1e-6 near log(1) = 0,
  // beyond the ONNX tests' absolute tolerance.
  if (op == "Sqrt") return V{{algorithm::eltwise_sqrt}};
  if (op == "Abs") return V{{algorithm::eltwise_abs}};
  if (op == "Neg") return V{{algorithm::eltwise_linear, -1.f, 0.f}};
  if (op == "Softplus") return V{{algorithm::eltwise_soft_relu}};
  if (op == "Mish") return V{{algorithm::eltwise_mish}};
  if (op == "HardSwish") return V{{algorithm::eltwise_hardswish}};
  // oneDNN 2.6 has no hardsigmoid: alpha*x+beta, then clip to [0, 1].
  if (op == "HardSigmoid")
    return V{{algorithm::eltwise_linear, n.attr_float("alpha", 0.2f), n.attr_float("beta", 0.5f)},
             {algorithm::eltwise_clip, 0.f, 1.f}};
  if (op == "Clip") return clip_steps(n);
  // Gelu: ONNX opset 20's (the core's gelu_fusion makes com.microsoft Gelu
  // of torch's x * 0.5 * (1 + Erf(x / sqrt(2))): ops/contrib_gelu.cpp).
  if (op == "Gelu") {
    const std::string approx = n.attr_string("approximate", "none");
    if (approx == "none") return V{{algorithm::eltwise_gelu_erf}};
    if (approx == "tanh") return V{{algorithm::eltwise_gelu_tanh}};
    return std::nullopt;
  }
  // 1 / x as x^-1 (oneDNN's pow is alpha * x^beta; 1 / 0 is inf as in ONNX).
  if (op == "Reciprocal") return V{{algorithm::eltwise_pow, 1.f, -1.f}};
  // Pow by a constant scalar: 2 (a variance written out as
  // ReduceMean((x - m)^2)) as an exact square, others as oneDNN's pow
  // (x^3 in GELU's tanh form written out; negative bases as std::pow takes
  // them: a sign for whole exponents, NaN otherwise).
  if (op == "Pow" && n.inputs.size() == 2) {
    auto e = constant_scalar(n, 1);
    // The exponent must not raise the result's rank by broadcasting.
    auto shape = n.constant_shapes.find(1);
    const size_t e_rank = shape == n.constant_shapes.end() ? 0 : shape->second.size();
    const auto x_rank = n.input_rank(0);
    if (e_rank > 0 && (!x_rank || e_rank > *x_rank)) return std::nullopt;
    if (!e || !std::isfinite(*e)) return std::nullopt;
    if (*e == 2.f) return V{{algorithm::eltwise_square}};
    return V{{algorithm::eltwise_pow, 1.f, *e}};
  }
  return std::nullopt;
}

std::optional<std::pair<float, float>> clamp_bounds(const EltwiseStep& step) {
  if (step.alg == dnnl::algorithm::eltwise_relu && step.alpha == 0.f)
    return std::make_pair(0.f, std::numeric_limits<float>::infinity());
  if (step.alg == dnnl::algorithm::eltwise_clip || step.alg == dnnl::algorithm::eltwise_clip_v2)
    return std::make_pair(step.alpha, step.beta);
  return std::nullopt;
}

std::optional<std::vector<EltwiseStep>> bias_activation_for(const NodeSpec& n) {
  if (!is_ms_domain(n) || n.inputs.size() < 2 || !n.has_input(0) || !n.has_input(1)) return std::nullopt;
  if (n.op_type == "BiasGelu") return std::vector<EltwiseStep>{{algorithm::eltwise_gelu_erf}};
  if (n.op_type == "FastGelu") return std::vector<EltwiseStep>{{algorithm::eltwise_gelu_tanh}};
  return std::nullopt;
}

std::optional<dnnl::algorithm> binary_algorithm_for(const NodeSpec& n) {
  if (!n.domain.empty() && n.domain != "ai.onnx") return std::nullopt;
  if (n.inputs.size() != 2) return std::nullopt;
  const std::string& op = n.op_type;
  if (op == "Add") return algorithm::binary_add;
  if (op == "Sub") return algorithm::binary_sub;
  if (op == "Mul") return algorithm::binary_mul;
  if (op == "Div") return algorithm::binary_div;
  if (op == "Max") return algorithm::binary_max;
  if (op == "Min") return algorithm::binary_min;
  return std::nullopt;
}

bool is_commutative(dnnl::algorithm alg) {
  return alg == algorithm::binary_add || alg == algorithm::binary_mul || alg == algorithm::binary_max ||
         alg == algorithm::binary_min;
}

}  // namespace loom::onednn
