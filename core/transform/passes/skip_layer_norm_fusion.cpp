// SkipLayerNormalization fusion (extended): LayerNormalization(a + b) over
// the last axis, with a and b of one 3-D shape [B, S, H] (the residual
// connections of transformer encoders), becomes com.microsoft
// SkipLayerNormalization(a, b, gamma, beta[, bias]). When one operand is
// itself `c + bias` (bias a constant [H], read only here), the bias joins as
// the fifth input. When the sum is also read elsewhere it becomes output 3
// (input_skip_bias_sum) instead of being computed twice.
#include <set>

#include "base/logging.h"
#include "transform/framework/fused_node.h"
#include "transform/framework/graph_matcher.h"
#include "transform/framework/graph_patch.h"
#include "transform/passes/passes.h"
#include "transform/framework/pattern_pass.h"

namespace loom::transform {
namespace {

struct SkipMatch {
  std::vector<ir::NodeId> nodes;
  std::string input, skip, gamma, beta, bias, y, sum, name;
  float epsilon = 1e-5f;
};

// Same rank-3 shape, dim by dim equal values or equal symbols.
bool same_3d_shape(const ir::ValueType* a, const ir::ValueType* b) {
  if (!a || !b || !a->has_shape || !b->has_shape || a->dims.size() != 3 || b->dims.size() != 3) return false;
  for (size_t i = 0; i < 3; ++i) {
    const DimInfo &x = a->dims[i], &y = b->dims[i];
    const bool same = (x.value >= 0 && x.value == y.value) || (x.value < 0 && !x.symbol.empty() && x.symbol == y.symbol);
    if (!same) return false;
  }
  return true;
}

std::optional<SkipMatch> match(const GraphMatcher& m, const ir::Node& ln) {
  if (ln.op_type != "LayerNormalization" || !ln.domain.empty() || ln.inputs.size() < 2 || ln.outputs.size() != 1)
    return std::nullopt;
  if (const ir::Attribute* a = ln.find_attribute("axis"); a && a->i != -1 && a->i != 2) return std::nullopt;
  if (const ir::Attribute* st = ln.find_attribute("stash_type"); st && st->i != 1) return std::nullopt;
  const ir::Node* add = m.producer(ln.inputs[0]);
  if (!add || !GraphMatcher::is(*add, "Add", 2) || add->inputs[0] == add->inputs[1]) return std::nullopt;
  const ir::Graph& g = m.graph();
  if (!m.is_float(add->inputs[0]) || !same_3d_shape(g.type_of(add->inputs[0]), g.type_of(add->inputs[1])) ||
      !same_3d_shape(g.type_of(add->inputs[0]), g.type_of(ln.inputs[0])))
    return std::nullopt;
  const int64_t h = m.last_dim(ln.inputs[0]);
  auto gamma_dims = m.constant_dims(ln.inputs[1]);
  if (h <= 0 || !gamma_dims || *gamma_dims != Dims{h}) return std::nullopt;
  if (ln.inputs.size() > 2 && !ln.inputs[2].empty()) {
    auto beta_dims = m.constant_dims(ln.inputs[2]);
    if (!beta_dims || *beta_dims != Dims{h}) return std::nullopt;
  }
  SkipMatch out;
  out.nodes = {add->id, ln.id};
  out.input = add->inputs[0];
  out.skip = add->inputs[1];
  out.gamma = ln.inputs[1];
  out.beta = ln.inputs.size() > 2 ? ln.inputs[2] : "";
  out.y = ln.outputs[0];
  out.name = ln.name;
  if (const ir::Attribute* e = ln.find_attribute("epsilon")) out.epsilon = e->f;
  const auto& readers = m.consumers(add->outputs[0]);
  if (readers.size() > 1 || g.is_graph_output(add->outputs[0])) out.sum = add->outputs[0];
  // A bias Add on either operand joins as input 4.
  for (int k = 0; k < 2; ++k) {
    const std::string& v = k == 0 ? out.input : out.skip;
    const ir::Node* b = m.producer(v);
    if (!b || m.sole_consumer(v) != add || !GraphMatcher::is(*b, "Add", 2)) continue;
    for (size_t i = 0; i < 2; ++i) {
      const std::string& c = b->inputs[1 - i];
      if (m.vector_operand(*b, "Add", c) == b->inputs[i] && same_3d_shape(g.type_of(c), g.type_of(v))) {
        out.bias = b->inputs[i];
        (k == 0 ? out.input : out.skip) = c;
        out.nodes.push_back(b->id);
        break;
      }
    }
    if (!out.bias.empty()) break;
  }
  return out;
}

class SkipLayerNormFusion : public Pass {
 public:
  std::string name() const override { return "skip_layer_norm_fusion"; }
  OptimizationLevel level() const override { return OptimizationLevel::kExtended; }

  Status run(ir::Graph& graph, PassContext& ctx, bool* changed) override {
    const std::vector<SkipMatch> matches =
        disjoint_matches<SkipMatch>(graph, [](const GraphMatcher& m, const ir::Node& n) { return match(m, n); });
    for (const SkipMatch& s : matches) {
      GraphPatch patch(graph, name() + " at '" + s.name + "'");
      std::vector<std::string> inputs = {s.input, s.skip, s.gamma, s.beta};
      if (!s.bias.empty()) inputs.push_back(s.bias);
      std::vector<std::string> outputs = {s.y};
      if (!s.sum.empty()) outputs = {s.y, "", "", s.sum};
      ir::Node n = fused_node(graph, "SkipLayerNormalization", kMicrosoftDomain, inputs, outputs,
                              patch.fresh_name(s.name + "/SkipLayerNorm"));
      set_float_attr(n, "epsilon", s.epsilon);
      replace_with_fused(patch, graph, ctx, changed, s.nodes, std::move(n));
    }
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<Pass> make_skip_layer_norm_fusion() { return std::make_unique<SkipLayerNormFusion>(); }

}  // namespace loom::transform
