// FastGelu fusion (extended): the tanh GELU
//   0.5 * x * (1 + Tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))
// in the forms torch.onnx.export writes (x^3 as Pow(x, 3), x * (x * x) or
// ((x * 0.044715) * x) * x: the cubic term is any tree of Muls over three
// x's, or Pow(x, 3), and scalar constants multiplying to 0.044715; the outer
// 0.5 * x * (1 + t) in the three orders gelu_fusion accepts; operands of
// Add / Mul either way round) becomes com.microsoft FastGelu(x); when x =
// a + bias with bias a constant vector over the last dim read only by the
// pattern, FastGelu(a, bias).
#include <cmath>
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

constexpr double kSqrt2OverPi = 0.7978845608028654;
constexpr double kCubic = 0.044715;

struct FastGeluMatch {
  std::vector<ir::NodeId> nodes;
  std::string x, y, name;
  std::string bias_input, bias;  // FastGelu(a, bias) operands when the Add before x joins
};

bool near(double got, double want) { return std::fabs(got - want) <= 1e-6 * std::max(1.0, std::fabs(want)); }

// Flattens the product producing `v` (Muls and Pow(x, 3) whose outputs are
// read only inside it) into: how many times x is a factor, the product of
// scalar constants, and the nodes. False on any other factor.
bool cubic_factors(const GraphMatcher& m, const std::string& v, const std::string& x, int depth, int* x_count,
                   double* constant, std::vector<ir::NodeId>* nodes) {
  if (v == x) {
    ++*x_count;
    return true;
  }
  if (auto c = m.float_constant(v); c && c->size() == 1 && m.constant_dims(v)->size() <= 1) {
    *constant *= (*c)[0];
    return true;
  }
  const ir::Node* p = m.producer(v);
  if (!p || depth > 4 || !m.sole_consumer(v)) return false;
  if (GraphMatcher::is(*p, "Pow", 2) && p->inputs[0] == x && m.op_with_scalar(*p, "Pow", x, 3.0)) {
    *x_count += 3;
    nodes->push_back(p->id);
    return true;
  }
  if (!GraphMatcher::is(*p, "Mul", 2)) return false;
  nodes->push_back(p->id);
  return cubic_factors(m, p->inputs[0], x, depth + 1, x_count, constant, nodes) &&
         cubic_factors(m, p->inputs[1], x, depth + 1, x_count, constant, nodes);
}

std::optional<FastGeluMatch> match(const GraphMatcher& m, const ir::Node& tanh) {
  if (!GraphMatcher::is(tanh, "Tanh", 1)) return std::nullopt;
  // Inner: Mul(Add(x, cubic), sqrt(2 / pi)).
  const std::string& inner = tanh.inputs[0];
  const ir::Node* k = m.producer(inner);
  if (!k || m.sole_consumer(inner) != &tanh || !GraphMatcher::is(*k, "Mul", 2)) return std::nullopt;
  std::string u;
  for (const std::string& v : k->inputs)
    if (u.empty() && m.op_with_scalar(*k, "Mul", v, kSqrt2OverPi)) u = v;
  const ir::Node* add = u.empty() ? nullptr : m.producer(u);
  if (!add || m.sole_consumer(u) != k || !GraphMatcher::is(*add, "Add", 2)) return std::nullopt;
  std::string x;
  std::vector<ir::NodeId> cubic_nodes;
  for (size_t i = 0; i < 2 && x.empty(); ++i) {
    const std::string& cand = add->inputs[i];
    const std::string& t = add->inputs[1 - i];
    if (!m.is_float(cand) || m.is_float_constant(cand) || t == cand) continue;
    int count = 0;
    double c = 1.0;
    std::vector<ir::NodeId> ns;
    if (cubic_factors(m, t, cand, 0, &count, &c, &ns) && count == 3 && near(c, kCubic) && !ns.empty()) {
      x = cand;
      cubic_nodes = std::move(ns);
    }
  }
  if (x.empty()) return std::nullopt;
  auto outer = match_gelu_outer(m, tanh.outputs[0], x);
  if (!outer) return std::nullopt;
  FastGeluMatch out;
  out.x = x;
  out.nodes = {k->id, add->id, tanh.id};
  out.nodes.insert(out.nodes.end(), cubic_nodes.begin(), cubic_nodes.end());
  out.nodes.insert(out.nodes.end(), outer->nodes.begin(), outer->nodes.end());
  out.y = outer->y;
  out.name = outer->name;
  // A node counted twice (a Mul by 0.5 inside the cubic tree) is no GELU.
  std::set<ir::NodeId> pattern(out.nodes.begin(), out.nodes.end());
  if (pattern.size() != out.nodes.size()) return std::nullopt;
  // FastGelu(input, bias) when x = Add(input, bias [C]) is read only by this pattern.
  if (auto b = m.bias_add(x, pattern)) {
    out.bias_input = b->input;
    out.bias = b->bias;
    out.nodes.push_back(b->add->id);
  }
  return out;
}

class FastGeluFusion : public Pass {
 public:
  std::string name() const override { return "fast_gelu_fusion"; }
  OptimizationLevel level() const override { return OptimizationLevel::kExtended; }

  Status run(ir::Graph& graph, PassContext& ctx, bool* changed) override {
    const std::vector<FastGeluMatch> matches =
        disjoint_matches<FastGeluMatch>(graph, [](const GraphMatcher& m, const ir::Node& n) { return match(m, n); });
    for (const FastGeluMatch& g : matches) {
      GraphPatch patch(graph, name() + " at '" + g.name + "'");
      const bool biased = !g.bias.empty();
      ir::Node n = fused_node(graph, "FastGelu", kMicrosoftDomain,
                              biased ? std::vector<std::string>{g.bias_input, g.bias} : std::vector<std::string>{g.x},
                              {g.y}, patch.fresh_name(g.name + "/FastGelu"));
      replace_with_fused(patch, graph, ctx, changed, g.nodes, std::move(n));
    }
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<Pass> make_fast_gelu_fusion() { return std::make_unique<FastGeluFusion>(); }

}  // namespace loom::transform
