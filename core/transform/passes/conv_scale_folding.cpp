// Conv + channel scale / shift folding (basic): a Conv or ConvTranspose with
// constant weights followed by Mul / Div by, or Add / Sub of, a constant that
// is a scalar or holds one value per output channel ([M,1,1], [1,M,1,1], ...)
// folds into the convolution: Mul scales W and B per channel, Add shifts B
// (Div and Sub by the constant the same way, with the conv as first operand).
// Only when the conv's output is read by that op alone, and the constant
// broadcasts to the conv's output shape without growing it.
#include <set>

#include "base/logging.h"
#include "transform/passes/conv_weights.h"
#include "transform/framework/graph_matcher.h"
#include "transform/framework/graph_patch.h"
#include "transform/passes/passes.h"
#include "transform/framework/pattern_pass.h"

namespace loom::transform {
namespace {

struct ScaleMatch {
  const ir::Node* conv = nullptr;
  const ir::Node* op = nullptr;
  std::string constant;
};

// The per-channel values of `c` for a conv output of rank `rank` with `M`
// channels ([N, M, spatial...]), when `c` is 1 everywhere but (possibly) the
// channel axis once right-aligned.
std::optional<std::vector<double>> channel_values(const Tensor& c, size_t rank, int64_t M) {
  const Dims& d = c.dims();
  if (d.size() > rank) return std::nullopt;
  bool per_channel = false;
  for (size_t i = 0; i < d.size(); ++i) {
    const size_t axis = rank - d.size() + i;
    if (d[i] == 1) continue;
    if (axis != 1 || d[i] != M) return std::nullopt;
    per_channel = true;
  }
  const float* v = c.data_as<float>();
  std::vector<double> out(static_cast<size_t>(M));
  for (int64_t m = 0; m < M; ++m) out[m] = per_channel ? v[m] : v[0];
  return out;
}

std::optional<ScaleMatch> match(const GraphMatcher& m, const ir::Node& op) {
  const bool commutative = op.op_type == "Mul" || op.op_type == "Add";
  if (!commutative && op.op_type != "Div" && op.op_type != "Sub") return std::nullopt;
  if (!GraphMatcher::is(op, op.op_type, 2) || op.inputs[0] == op.inputs[1]) return std::nullopt;
  for (size_t k = 0; k < 2; ++k) {
    if (k == 1 && !commutative) break;
    const std::string& x = op.inputs[k];
    const std::string& c = op.inputs[1 - k];
    const ir::Node* conv = m.producer(x);
    if (conv == nullptr || m.sole_consumer(x) != &op || float_initializer(m.graph(), c) == nullptr) continue;
    auto parts = conv_parts(m.graph(), *conv);
    if (!parts) continue;
    auto values = channel_values(*float_initializer(m.graph(), c), parts->w->dims().size(), parts->out_channels);
    if (!values) continue;
    if (op.op_type == "Div")
      for (double v : *values)
        if (v == 0) return std::nullopt;  // x / 0 is +-inf or NaN by sign of x: W * inf is not
    return ScaleMatch{conv, &op, c};
  }
  return std::nullopt;
}

class ConvScaleFolding : public Pass {
 public:
  std::string name() const override { return "conv_scale_folding"; }
  OptimizationLevel level() const override { return OptimizationLevel::kBasic; }

  Status run(ir::Graph& graph, PassContext& ctx, bool* changed) override {
    std::vector<ScaleMatch> matches;
    {
      GraphMatcher m(graph);
      std::set<ir::NodeId> taken;
      for (const auto& n : graph.nodes()) {
        auto s = match(m, *n);
        if (!s || taken.count(s->conv->id) || taken.count(s->op->id)) continue;
        taken.insert({s->conv->id, s->op->id});
        matches.push_back(*s);
      }
    }
    for (const ScaleMatch& s : matches) {
      const ir::Node& conv = *s.conv;
      const ir::Node& op = *s.op;
      const ConvParts p = *conv_parts(graph, conv);
      const int64_t M = p.out_channels;
      std::vector<double> c = *channel_values(graph.initializers.at(s.constant), p.w->dims().size(), M);
      const bool scales = op.op_type == "Mul" || op.op_type == "Div";
      if (op.op_type == "Div")
        for (double& v : c) v = 1.0 / v;
      if (op.op_type == "Sub")
        for (double& v : c) v = -v;
      std::vector<float> b_new(M);
      for (int64_t k = 0; k < M; ++k) {
        const double b0 = p.b ? p.b->data_as<float>()[k] : 0.0;
        b_new[k] = static_cast<float>(scales ? b0 * c[k] : b0 + c[k]);
      }
      GraphPatch patch(graph, name() + " at '" + conv.label() + "'");
      const std::string w = scales ? patch.add_initializer(conv.inputs[1] + "/scaled", scale_conv_weight(conv, p, c))
                                   : conv.inputs[1];
      std::string b;
      if (p.b || !scales)
        b = patch.add_initializer((p.b ? conv.inputs[2] : conv.outputs[0] + "/bias") + (scales ? "/scaled" : "/shifted"),
                                  Tensor::from_vector(DType::kFloat, {M}, b_new));
      ir::Node folded = rewired_conv(conv, w, b, op.outputs[0]);
      if (b.empty()) folded.inputs.resize(2);
      patch.add_node(std::move(folded));
      patch.remove_node(conv.id);
      patch.remove_node(op.id);
      commit_or_skip(patch, ctx, changed);
    }
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<Pass> make_conv_scale_folding() { return std::make_unique<ConvScaleFolding>(); }

}  // namespace loom::transform
