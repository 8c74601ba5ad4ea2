// Relu / Clip removal before a QuantizeLinear that already clamps the same
// way, as ONNX Runtime's ReluQuantFusion and ClipQuantFusion: in a QDQ
// model, Conv -> Relu -> Q becomes Conv -> Q, so the QDQ fusion can turn
// DQ -> Conv -> Q into one int8 op.
//
// Exact, not an approximation: Q(x) = saturate(round(x / s) + z). When z is
// the type's minimum, Q(x) = Q(0) for every x <= 0, so Q(Relu(x)) = Q(x);
// Clip(lo, hi) may go when Q(lo) = qmin and Q(hi) = qmax (what it cuts off
// saturates anyway). The Relu / Clip must feed only that Q.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <tuple>

#include "transform/framework/graph_matcher.h"
#include "transform/framework/graph_patch.h"
#include "transform/passes/passes.h"
#include "transform/framework/pattern_pass.h"
#include "transform/passes/quantization_params.h"

namespace loom::transform {
namespace {

struct ActivationMatch {
  std::vector<ir::NodeId> nodes;  // the activation
  std::string input, output;      // the activation's input, and its output the Q reads
};

// Q's value for x: round half to even, saturated.
int64_t quantize(double x, float scale, int64_t zero, int64_t qmin, int64_t qmax) {
  const double q = std::nearbyint(x / static_cast<double>(scale)) + static_cast<double>(zero);
  return static_cast<int64_t>(std::clamp(q, static_cast<double>(qmin), static_cast<double>(qmax)));
}

std::optional<ActivationMatch> match(const GraphMatcher& m, const ir::Node& act) {
  const bool relu = GraphMatcher::is(act, "Relu", 1);
  if ((!relu && (act.op_type != "Clip" || !act.domain.empty() || act.outputs.size() != 1)) || act.inputs.empty() ||
      !m.is_float(act.outputs[0]))
    return std::nullopt;
  const ir::Node* q = m.sole_consumer(act.outputs[0]);
  if (q == nullptr || q->inputs.empty() || q->inputs[0] != act.outputs[0]) return std::nullopt;
  auto p = quantization_params(m, *q, /*quantize=*/true);
  if (!p || !p->per_tensor()) return std::nullopt;
  const int64_t qmin = p->type == DType::kUint8 ? 0 : -128, qmax = p->type == DType::kUint8 ? 255 : 127;
  float lo = 0.0f, hi = FLT_MAX;
  if (!relu) {
    auto bounds = m.clip_bounds(act);
    if (!bounds) return std::nullopt;
    std::tie(lo, hi) = *bounds;
  }
  const float s = p->scale[0];
  const int64_t z = p->zero_point[0];
  if (!(s > 0.0f) || !std::isfinite(s)) return std::nullopt;
  // Q is monotone: values below lo quantize as lo does exactly when lo
  // reaches qmin (Relu: lo = 0, so z = qmin); above hi, likewise qmax.
  if (quantize(lo, s, z, qmin, qmax) != qmin) return std::nullopt;
  if (hi != FLT_MAX && quantize(hi, s, z, qmin, qmax) != qmax) return std::nullopt;
  return ActivationMatch{{act.id}, act.inputs[0], act.outputs[0]};
}

class QuantizedActivationRemoval : public Pass {
 public:
  std::string name() const override { return "quantized_activation_removal"; }
  OptimizationLevel level() const override { return OptimizationLevel::kBasic; }

  Status run(ir::Graph& graph, PassContext& ctx, bool* changed) override {
    for (const ActivationMatch& a : disjoint_matches<ActivationMatch>(graph, match)) {
      GraphPatch patch(graph, name() + " at '" + a.output + "'");
      patch.remove_node(a.nodes[0]);
      patch.replace_uses(a.output, a.input);
      commit_or_skip(patch, ctx, changed);
    }
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<Pass> make_quantized_activation_removal() { return std::make_unique<QuantizedActivationRemoval>(); }

}  // namespace loom::transform
