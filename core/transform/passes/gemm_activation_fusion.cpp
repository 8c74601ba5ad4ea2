// Gemm + activation fusion (extended), as ONNX Runtime's GemmActivationFusion:
// a float Gemm whose output is read only by an Elu, HardSigmoid, LeakyRelu,
// Relu, Selu, Sigmoid, Softplus, Softsign, Tanh or ThresholdedRelu becomes
// com.microsoft FusedGemm with the Gemm's attributes, `activation` = the op
// type, and each attribute of the activation copied as `activation_<name>`.
#include <set>

#include "transform/framework/fused_node.h"
#include "transform/framework/graph_matcher.h"
#include "transform/framework/graph_patch.h"
#include "transform/passes/passes.h"
#include "transform/framework/pattern_pass.h"

namespace loom::transform {
namespace {

// ONNX Runtime's list. Where the Gemm's EP cannot run the fused form (cpu_onednn
// has no Softsign or ThresholdedRelu), the fusion gate keeps the nodes apart
// (PassContext::accept_fusion).
const std::set<std::string>& fusable_activations() {
  static const std::set<std::string> ops = {"Elu",     "HardSigmoid", "LeakyRelu", "Relu", "Selu",
                                            "Sigmoid", "Softplus",    "Softsign",  "Tanh", "ThresholdedRelu"};
  return ops;
}

struct GemmActivationMatch {
  std::vector<ir::NodeId> nodes;
  ir::Node gemm, act;
};

std::optional<GemmActivationMatch> match(const GraphMatcher& m, const ir::Node& gemm) {
  if (gemm.op_type != "Gemm" || !gemm.domain.empty() || gemm.outputs.size() != 1 ||
      (gemm.inputs.size() != 2 && gemm.inputs.size() != 3))
    return std::nullopt;
  const std::string& y = gemm.outputs[0];
  if (!m.is_float(y)) return std::nullopt;
  const ir::Node* act = m.sole_consumer(y);
  if (!act || !GraphMatcher::is(*act, act->op_type, 1) || act->inputs[0] != y ||
      !fusable_activations().count(act->op_type))
    return std::nullopt;
  return GemmActivationMatch{{gemm.id, act->id}, gemm, *act};
}

class GemmActivationFusion : public Pass {
 public:
  std::string name() const override { return "gemm_activation_fusion"; }
  OptimizationLevel level() const override { return OptimizationLevel::kExtended; }

  Status run(ir::Graph& graph, PassContext& ctx, bool* changed) override {
    for (const GemmActivationMatch& g : disjoint_matches<GemmActivationMatch>(graph, match)) {
      GraphPatch patch(graph, name() + " at '" + g.gemm.name + "'");
      ir::Node n = fused_node(graph, "FusedGemm", kMicrosoftDomain, g.gemm.inputs, g.act.outputs,
                              patch.fresh_name(g.gemm.name.empty() ? "FusedGemm" : g.gemm.name));
      n.attributes = g.gemm.attributes;
      set_string_attr(n, "activation", g.act.op_type);
      for (ir::Attribute a : g.act.attributes) {
        a.name = "activation_" + a.name;
        n.attributes.push_back(std::move(a));
      }
      replace_with_fused(patch, graph, ctx, changed, g.nodes, std::move(n));
    }
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<Pass> make_gemm_activation_fusion() { return std::make_unique<GemmActivationFusion>(); }

}  // namespace loom::transform
