// LayerNorm fusion (extended): LayerNorm over the last axis written out as
// exporters emit it,
//   m = ReduceMean(x, -1); d = x - m; v = ReduceMean(Pow(d, 2), -1)
//   y = d / Sqrt(v + eps)   (or d * Reciprocal(Sqrt(v + eps)))
//   [y = y * gamma [C]] [y = y + beta [C]]
// becomes LayerNormalization(x, gamma or ones, beta) with axis -1 and eps.
// Every intermediate must be read only inside the pattern. Models before
// opset 17 get ONNX Runtime's contrib LayerNormalization in the default
// domain (same semantics), as its transformer optimizer emits.
#include <set>

#include "base/logging.h"
#include "transform/framework/fused_node.h"
#include "transform/framework/graph_matcher.h"
#include "transform/framework/graph_patch.h"
#include "transform/passes/passes.h"
#include "transform/framework/pattern_pass.h"

namespace loom::transform {
namespace {

struct LayerNormMatch {
  std::vector<ir::NodeId> nodes;
  std::string x, gamma, beta, y;
  float epsilon = 0;
  int64_t width = -1;  // x's last dim when known
  std::string name;
};

std::optional<LayerNormMatch> match(const GraphMatcher& m, const ir::Node& r0) {
  if (!m.is_last_axis_mean(r0)) return std::nullopt;
  LayerNormMatch out;
  out.x = r0.inputs[0];
  const ir::Node* sub = m.sole_consumer(r0.outputs[0]);
  if (!sub || !GraphMatcher::is(*sub, "Sub", 2) || sub->inputs[0] != out.x || sub->inputs[1] != r0.outputs[0])
    return std::nullopt;
  const std::string& d = sub->outputs[0];
  const auto& readers = m.consumers(d);
  if (m.graph().is_graph_output(d) || readers.size() != 2) return std::nullopt;
  const ir::Node* pow = readers[0]->op_type == "Pow" ? readers[0] : readers[1];
  const ir::Node* use = pow == readers[0] ? readers[1] : readers[0];
  if (!GraphMatcher::is(*pow, "Pow", 2) || pow->inputs[0] != d) return std::nullopt;
  auto two = m.float_constant(pow->inputs[1]);
  if (!two || two->size() != 1 || (*two)[0] != 2.f) return std::nullopt;
  const ir::Node* r1 = m.sole_consumer(pow->outputs[0]);
  if (!r1 || !m.is_last_axis_mean(*r1)) return std::nullopt;
  const ir::Node* add = m.sole_consumer(r1->outputs[0]);
  if (!add) return std::nullopt;
  auto eps = m.scalar_operand(*add, "Add", r1->outputs[0]);
  if (!eps || !(*eps >= 0.f)) return std::nullopt;
  const ir::Node* sq = m.sole_consumer(add->outputs[0]);
  if (!sq || !GraphMatcher::is(*sq, "Sqrt", 1)) return std::nullopt;
  const std::string& s = sq->outputs[0];
  const ir::Node* next = m.sole_consumer(s);
  if (!next) return std::nullopt;
  out.nodes = {r0.id, sub->id, pow->id, r1->id, add->id, sq->id};
  if (next == use && GraphMatcher::is(*use, "Div", 2) && use->inputs[0] == d && use->inputs[1] == s) {
    // d / s
  } else if (GraphMatcher::is(*next, "Reciprocal", 1) && m.sole_consumer(next->outputs[0]) == use &&
             GraphMatcher::is(*use, "Mul", 2) &&
             ((use->inputs[0] == d && use->inputs[1] == next->outputs[0]) ||
              (use->inputs[1] == d && use->inputs[0] == next->outputs[0]))) {
    out.nodes.push_back(next->id);
  } else {
    return std::nullopt;
  }
  out.nodes.push_back(use->id);
  out.epsilon = *eps;
  out.width = m.last_dim(out.x);
  out.y = use->outputs[0];
  out.name = use->name;
  // Optional affine part.
  if (const ir::Node* mul = m.sole_consumer(out.y)) {
    out.gamma = m.vector_operand(*mul, "Mul", out.y);
    if (!out.gamma.empty()) {
      out.nodes.push_back(mul->id);
      out.y = mul->outputs[0];
      out.name = mul->name;
      if (const ir::Node* badd = m.sole_consumer(out.y)) {
        out.beta = m.vector_operand(*badd, "Add", out.y);
        if (!out.beta.empty()) {
          out.nodes.push_back(badd->id);
          out.y = badd->outputs[0];
          out.name = badd->name;
        }
      }
    }
  }
  return out;
}

class LayerNormFusion : public Pass {
 public:
  std::string name() const override { return "layer_norm_fusion"; }
  OptimizationLevel level() const override { return OptimizationLevel::kExtended; }

  Status run(ir::Graph& graph, PassContext& ctx, bool* changed) override {
    const std::vector<LayerNormMatch> matches =
        disjoint_matches<LayerNormMatch>(graph, [](const GraphMatcher& m, const ir::Node& n) { return match(m, n); });
    for (const LayerNormMatch& l : matches) {
      GraphPatch patch(graph, name() + " at '" + l.name + "'");
      std::string gamma = l.gamma;
      if (gamma.empty()) {
        const int64_t c = l.width;
        if (c <= 0) continue;  // no scale and an unknown width: leave it written out
        gamma = patch.add_initializer(l.name + "/ones",
                                      Tensor::from_vector(DType::kFloat, {c}, std::vector<float>(static_cast<size_t>(c), 1.f)));
      }
      std::vector<std::string> inputs = {l.x, gamma};
      if (!l.beta.empty()) inputs.push_back(l.beta);
      ir::Node ln = fused_node(graph, "LayerNormalization", "", inputs, {l.y}, patch.fresh_name(l.name + "/LayerNorm"));
      set_int_attr(ln, "axis", -1);
      set_float_attr(ln, "epsilon", l.epsilon);
      replace_with_fused(patch, graph, ctx, changed, l.nodes, std::move(ln));
    }
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<Pass> make_layer_norm_fusion() { return std::make_unique<LayerNormFusion>(); }

}  // namespace loom::transform
