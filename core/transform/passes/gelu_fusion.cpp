// GELU fusion (extended): x * 0.5 * (1 + Erf(x / sqrt(2))) in the forms
// PyTorch exports (x / sqrt(2) or x * (1 / sqrt(2)); then (x * (1 + e)) * 0.5,
// x * ((1 + e) * 0.5) or (x * 0.5) * (1 + e); operands of Add / Mul either
// way round) becomes com.microsoft Gelu(x); when x = a + bias with bias a
// constant vector over the last dim read only by the pattern, BiasGelu(a,
// bias) (ONNX Runtime's contrib ops; the MatMul before it keeps the bias as
// a post-op in EPs that fuse one). A Gelu already fused whose input is such
// an Add becomes BiasGelu too.
#include <set>

#include "base/logging.h"
#include "transform/framework/fused_node.h"
#include "transform/passes/gelu_outer.h"
#include "transform/framework/graph_matcher.h"
#include "transform/framework/graph_patch.h"
#include "transform/passes/passes.h"
#include "transform/framework/pattern_pass.h"

namespace loom::transform {
namespace {

constexpr double kSqrt2 = 1.4142135623730951;

struct GeluMatch {
  std::vector<ir::NodeId> nodes;
  std::string x, y, name;
  std::string bias_input, bias;  // BiasGelu operands when the Add before x joins
};

std::optional<GeluMatch> match(const GraphMatcher& m, const ir::Node& erf) {
  if (!GraphMatcher::is(erf, "Erf", 1)) return std::nullopt;
  const ir::Node* d = m.producer(erf.inputs[0]);
  if (!d || m.sole_consumer(erf.inputs[0]) != &erf || d->inputs.size() != 2) return std::nullopt;
  std::string x;
  for (const std::string& v : d->inputs)
    if (x.empty() && m.is_float(v) && !m.is_float_constant(v) &&
        (m.op_with_scalar(*d, "Div", v, kSqrt2) || m.op_with_scalar(*d, "Mul", v, 1.0 / kSqrt2)))
      x = v;
  if (x.empty()) return std::nullopt;
  auto outer = match_gelu_outer(m, erf.outputs[0], x, d);
  if (!outer) return std::nullopt;
  GeluMatch out;
  out.x = x;
  out.nodes = {d->id, erf.id};
  out.nodes.insert(out.nodes.end(), outer->nodes.begin(), outer->nodes.end());
  out.y = outer->y;
  out.name = outer->name;
  // BiasGelu when x = Add(input, bias [C]) is read only by this pattern.
  if (auto b = m.bias_add(x, std::set<ir::NodeId>(out.nodes.begin(), out.nodes.end()))) {
    out.bias_input = b->input;
    out.bias = b->bias;
    out.nodes.push_back(b->add->id);
  }
  return out;
}

// An existing Gelu(a + bias) (fused before the bias's width was known, or
// from another tool): BiasGelu(a, bias) when the Add is read only by it.
std::optional<GeluMatch> match_biased_gelu(const GraphMatcher& m, const ir::Node& gelu) {
  if (gelu.op_type != "Gelu" || gelu.domain != kMicrosoftDomain || gelu.inputs.size() != 1 || gelu.outputs.size() != 1)
    return std::nullopt;
  const std::string& x = gelu.inputs[0];
  auto b = m.bias_add(x, {gelu.id});
  if (!b) return std::nullopt;
  GeluMatch out;
  out.nodes = {b->add->id, gelu.id};
  out.x = x;
  out.y = gelu.outputs[0];
  out.name = gelu.name;
  out.bias_input = b->input;
  out.bias = b->bias;
  return out;
}

class GeluFusion : public Pass {
 public:
  std::string name() const override { return "gelu_fusion"; }
  OptimizationLevel level() const override { return OptimizationLevel::kExtended; }

  Status run(ir::Graph& graph, PassContext& ctx, bool* changed) override {
    const std::vector<GeluMatch> matches = disjoint_matches<GeluMatch>(graph, [](const GraphMatcher& m, const ir::Node& n) {
      auto found = match(m, n);
      return found ? found : match_biased_gelu(m, n);
    });
    for (const GeluMatch& g : matches) {
      GraphPatch patch(graph, name() + " at '" + g.name + "'");
      const bool biased = !g.bias.empty();
      ir::Node n = fused_node(graph, biased ? "BiasGelu" : "Gelu", kMicrosoftDomain,
                              biased ? std::vector<std::string>{g.bias_input, g.bias} : std::vector<std::string>{g.x},
                              {g.y}, patch.fresh_name(g.name + (biased ? "/BiasGelu" : "/Gelu")));
      replace_with_fused(patch, graph, ctx, changed, g.nodes, std::move(n));
    }
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<Pass> make_gelu_fusion() { return std::make_unique<GeluFusion>(); }

}  // namespace loom::transform
