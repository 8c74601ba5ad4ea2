// Conv + activation fusion (extended), as ONNX Runtime's ConvActivationFusion
// for its CPU EP: a float Conv whose output is read only by a Relu, Tanh,
// Sigmoid, LeakyRelu, HardSigmoid or Clip (constant bounds) becomes
// com.microsoft FusedConv with the Conv's attributes plus `activation` and
// `activation_params` (LeakyRelu: alpha; Clip: min, max; HardSigmoid: alpha,
// beta). Where the activation only runs as a post-op anyway (cpu_onednn), the
// fused node costs nothing; the reference EP saves a pass over the output.
// As ONNX Runtime's ConvAddActivationFusion for its CUDA EP, a Conv read only
// by an Add of a tensor of the Conv's own shape (a residual), itself read
// only by a Relu or by nothing else, becomes FusedConv with that tensor as
// Z: y = act(conv + B + Z) in one pass (cuDNN fuses it into the convolution).
// The fusion gate keeps the nodes where the EP does not run Z (cpu_onednn).
#include <optional>

#include "transform/framework/fused_node.h"
#include "transform/framework/graph_matcher.h"
#include "transform/framework/graph_patch.h"
#include "transform/passes/passes.h"
#include "transform/framework/pattern_pass.h"

namespace loom::transform {
namespace {

struct ConvActivationMatch {
  std::vector<ir::NodeId> nodes;
  const ir::Node* conv = nullptr;
  std::string activation, output;
  std::vector<float> params;
  std::string z;  // the residual added before the activation ("" for none)
};

// The same dims, known or named alike: Z adds element for element, with no broadcast.
bool same_shape(const ir::ValueType* a, const ir::ValueType* b) {
  if (a == nullptr || b == nullptr || !a->has_shape || !b->has_shape || a->dims.size() != b->dims.size() ||
      a->dtype != b->dtype)
    return false;
  for (size_t i = 0; i < a->dims.size(); ++i) {
    const DimInfo &x = a->dims[i], &y = b->dims[i];
    if (x.value >= 0 || y.value >= 0) {
      if (x.value != y.value) return false;
    } else if (x.symbol.empty() || x.symbol != y.symbol) {
      return false;
    }
  }
  return true;
}

// Conv -> Add(conv, z) [-> Relu]: z and the activation, or nullopt.
std::optional<ConvActivationMatch> match_residual(const GraphMatcher& m, const ir::Graph& g, const ir::Node& conv,
                                                  const ir::Node& add) {
  if (add.op_type != "Add" || !add.domain.empty() || add.inputs.size() != 2 || add.outputs.size() != 1 ||
      add.inputs[0] == add.inputs[1])
    return std::nullopt;
  const std::string& y = conv.outputs[0];
  const std::string& z = add.inputs[0] == y ? add.inputs[1] : add.inputs[0];
  if (z.empty() || !same_shape(g.type_of(y), g.type_of(z)) || !same_shape(g.type_of(y), g.type_of(add.outputs[0])))
    return std::nullopt;
  ConvActivationMatch out;
  out.conv = &conv;
  out.z = z;
  out.nodes = {conv.id, add.id};
  out.output = add.outputs[0];
  const ir::Node* relu = m.sole_consumer(add.outputs[0]);
  if (relu && relu->op_type == "Relu" && relu->domain.empty() && relu->inputs.size() == 1 &&
      !g.is_graph_output(add.outputs[0])) {
    out.activation = "Relu";
    out.nodes.push_back(relu->id);
    out.output = relu->outputs[0];
  }
  return out;
}

std::optional<ConvActivationMatch> match(const GraphMatcher& m, const ir::Node& conv) {
  if (conv.op_type != "Conv" || !conv.domain.empty() || conv.outputs.size() != 1 ||
      (conv.inputs.size() != 2 && conv.inputs.size() != 3))
    return std::nullopt;
  const std::string& y = conv.outputs[0];
  if (!m.is_float(y)) return std::nullopt;
  const ir::Node* act = m.sole_consumer(y);
  if (act && act->op_type == "Add") return match_residual(m, m.graph(), conv, *act);
  if (!act || !act->domain.empty() || act->outputs.size() != 1 || act->inputs.empty() || act->inputs[0] != y)
    return std::nullopt;
  ConvActivationMatch out;
  const std::string& op = act->op_type;
  if ((op == "Relu" || op == "Tanh" || op == "Sigmoid") && act->inputs.size() == 1) {
  } else if (op == "LeakyRelu" && act->inputs.size() == 1) {
    out.params = {act->float_attr("alpha", 0.01f)};
  } else if (op == "HardSigmoid" && act->inputs.size() == 1) {
    out.params = {act->float_attr("alpha", 0.2f), act->float_attr("beta", 0.5f)};
  } else if (op == "Clip") {
    auto bounds = m.clip_bounds(*act);
    if (!bounds) return std::nullopt;
    out.params = {bounds->first, bounds->second};
  } else {
    return std::nullopt;
  }
  out.nodes = {conv.id, act->id};
  out.conv = &conv;
  out.activation = op;
  out.output = act->outputs[0];
  return out;
}

class ConvActivationFusion : public Pass {
 public:
  std::string name() const override { return "conv_activation_fusion"; }
  OptimizationLevel level() const override { return OptimizationLevel::kExtended; }

  Status run(ir::Graph& graph, PassContext& ctx, bool* changed) override {
    // Copy what the rewrite needs: the matched nodes die with the first commit.
    struct Rewrite {
      ConvActivationMatch match;
      ir::Node conv;
    };
    std::vector<Rewrite> rewrites;
    for (ConvActivationMatch& c : disjoint_matches<ConvActivationMatch>(graph, match))
      rewrites.push_back({c, *c.conv});
    for (const Rewrite& r : rewrites) {
      GraphPatch patch(graph, name() + " at '" + r.conv.name + "'");
      std::vector<std::string> inputs = r.conv.inputs;
      if (!r.match.z.empty()) {
        inputs.resize(3);  // B may be absent ("")
        inputs.push_back(r.match.z);
      }
      ir::Node n = fused_node(graph, "FusedConv", kMicrosoftDomain, inputs, {r.match.output},
                              patch.fresh_name(r.conv.name.empty() ? "FusedConv" : r.conv.name));
      n.attributes = r.conv.attributes;
      if (!r.match.activation.empty()) set_string_attr(n, "activation", r.match.activation);
      if (!r.match.params.empty()) set_floats_attr(n, "activation_params", r.match.params);
      replace_with_fused(patch, graph, ctx, changed, r.match.nodes, std::move(n));
    }
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<Pass> make_conv_activation_fusion() { return std::make_unique<ConvActivationFusion>(); }

}  // namespace loom::transform
