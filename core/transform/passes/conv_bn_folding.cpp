// Conv + BatchNormalization folding (basic): an inference BatchNormalization
// right after a Conv or ConvTranspose with constant weights is a per-output-
// channel affine map, so it folds into the convolution:
//   s = scale / sqrt(var + eps);  W' = W * s (per output channel);
//   B' = (B - mean) * s + bias  (B = 0 when the conv has none).
// Only when the conv's output is read by the BatchNormalization alone and
// every BN parameter is a constant of [M]. W' and B' are new initializers (the
// old ones may be shared; dead-code elimination drops them when unused).
#include <cmath>
#include <set>

#include "base/logging.h"
#include "transform/passes/conv_weights.h"
#include "transform/framework/graph_matcher.h"
#include "transform/framework/graph_patch.h"
#include "transform/passes/passes.h"
#include "transform/framework/pattern_pass.h"

namespace loom::transform {
namespace {

struct BnMatch {
  const ir::Node* conv = nullptr;
  const ir::Node* bn = nullptr;
};

// BatchNormalization computing y = (x - mean) / sqrt(var + eps) * scale + bias
// with its stored statistics (no training mode, no used training outputs,
// per-channel parameters).
bool is_inference_bn(const ir::Node& n) {
  if (n.op_type != "BatchNormalization" || !n.domain.empty() || n.inputs.size() != 5 || n.outputs.empty() ||
      n.outputs[0].empty())
    return false;
  for (size_t i = 1; i < n.outputs.size(); ++i)
    if (!n.outputs[i].empty()) return false;
  if (const ir::Attribute* a = n.find_attribute("training_mode"); a && a->i != 0) return false;
  if (n.opset < 7) {  // is_test defaults to 0 (training) before opset 7
    const ir::Attribute* a = n.find_attribute("is_test");
    if (a == nullptr || a->i == 0) return false;
  }
  if (const ir::Attribute* a = n.find_attribute("spatial"); a && a->i == 0) return false;
  return true;
}

std::optional<BnMatch> match(const GraphMatcher& m, const ir::Node& bn) {
  if (!is_inference_bn(bn)) return std::nullopt;
  const ir::Node* conv = m.producer(bn.inputs[0]);
  if (conv == nullptr || m.sole_consumer(bn.inputs[0]) != &bn) return std::nullopt;
  auto parts = conv_parts(m.graph(), *conv);
  if (!parts) return std::nullopt;
  for (size_t i = 1; i < 5; ++i) {
    const Tensor* t = float_initializer(m.graph(), bn.inputs[i]);
    if (t == nullptr || t->dims() != Dims{parts->out_channels}) return std::nullopt;
  }
  return BnMatch{conv, &bn};
}

class ConvBnFolding : public Pass {
 public:
  std::string name() const override { return "conv_bn_folding"; }
  OptimizationLevel level() const override { return OptimizationLevel::kBasic; }

  Status run(ir::Graph& graph, PassContext& ctx, bool* changed) override {
    std::vector<BnMatch> matches;
    {
      GraphMatcher m(graph);
      std::set<ir::NodeId> taken;
      for (const auto& n : graph.nodes()) {
        auto b = match(m, *n);
        if (!b || taken.count(b->conv->id) || taken.count(b->bn->id)) continue;
        taken.insert({b->conv->id, b->bn->id});
        matches.push_back(*b);
      }
    }
    // Patches add and remove nodes but the matched ones stay alive until
    // their own patch removes them, so the pointers remain valid.
    for (const BnMatch& b : matches) {
      const ir::Node& conv = *b.conv;
      const ir::Node& bn = *b.bn;
      const ConvParts p = *conv_parts(graph, conv);
      const int64_t M = p.out_channels;
      float eps = 1e-5f;
      if (const ir::Attribute* a = bn.find_attribute("epsilon")) eps = a->f;
      const float* scale = graph.initializers.at(bn.inputs[1]).data_as<float>();
      const float* bias = graph.initializers.at(bn.inputs[2]).data_as<float>();
      const float* mean = graph.initializers.at(bn.inputs[3]).data_as<float>();
      const float* var = graph.initializers.at(bn.inputs[4]).data_as<float>();
      std::vector<double> s(M);
      std::vector<float> b_new(M);
      for (int64_t c = 0; c < M; ++c) {
        s[c] = static_cast<double>(scale[c]) / std::sqrt(static_cast<double>(var[c]) + static_cast<double>(eps));
        const double b0 = p.b ? p.b->data_as<float>()[c] : 0.0;
        b_new[c] = static_cast<float>((b0 - mean[c]) * s[c] + bias[c]);
      }
      GraphPatch patch(graph, name() + " at '" + conv.label() + "'");
      const std::string w = patch.add_initializer(conv.inputs[1] + "/bn_folded", scale_conv_weight(conv, p, s));
      const std::string bb = patch.add_initializer(
          (p.b ? conv.inputs[2] : conv.outputs[0] + "/bias") + "/bn_folded", Tensor::from_vector(DType::kFloat, {M}, b_new));
      patch.add_node(rewired_conv(conv, w, bb, bn.outputs[0]));
      patch.remove_node(conv.id);
      patch.remove_node(bn.id);
      commit_or_skip(patch, ctx, changed);
    }
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<Pass> make_conv_bn_folding() { return std::make_unique<ConvBnFolding>(); }

}  // namespace loom::transform
