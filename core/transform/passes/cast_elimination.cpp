// Cast elimination (basic):
// - a Cast to the type its input already has is removed (its readers read the
//   input; a graph output keeps its name through an Identity);
// - Cast(Cast(x, T1), T2) becomes Cast(x, T2) when x -> T1 is exact (every
//   value of x's type is represented unchanged in T1, see kExact): then the
//   outer Cast sees x's own values and converts them as a direct cast would.
//   float -> double -> float qualifies; float -> int32 -> float (truncates)
//   and float -> float16 -> float (rounds) do not. When T2 is x's type the
//   pair goes away entirely. The inner Cast is removed only when the outer
//   one is its sole reader.
#include <map>
#include <set>

#include "base/logging.h"
#include "transform/framework/graph_matcher.h"
#include "transform/framework/graph_patch.h"
#include "transform/passes/passes.h"
#include "transform/framework/pattern_pass.h"

namespace loom::transform {
namespace {

using DT = DType;

// From -> types holding every value of From exactly (integer widths with
// room for sign, floats whose significand covers the integer's bits: float16
// holds 11 bits, bfloat16 8, float 24, double 53). Strings are never listed:
// number <-> string conversions format and parse, and float and double
// print differently.
const std::map<DT, std::set<DT>>& exact_widenings() {
  static const std::map<DT, std::set<DT>> kExact = {
      {DT::kBool,
       {DT::kUint8, DT::kInt8, DT::kUint16, DT::kInt16, DT::kUint32, DT::kInt32, DT::kUint64, DT::kInt64,
        DT::kFloat16, DT::kBFloat16, DT::kFloat, DT::kDouble}},
      {DT::kUint8,
       {DT::kUint16, DT::kInt16, DT::kUint32, DT::kInt32, DT::kUint64, DT::kInt64, DT::kFloat16, DT::kBFloat16,
        DT::kFloat, DT::kDouble}},
      {DT::kInt8, {DT::kInt16, DT::kInt32, DT::kInt64, DT::kFloat16, DT::kBFloat16, DT::kFloat, DT::kDouble}},
      {DT::kUint16, {DT::kUint32, DT::kInt32, DT::kUint64, DT::kInt64, DT::kFloat, DT::kDouble}},
      {DT::kInt16, {DT::kInt32, DT::kInt64, DT::kFloat, DT::kDouble}},
      {DT::kUint32, {DT::kUint64, DT::kInt64, DT::kDouble}},
      {DT::kInt32, {DT::kInt64, DT::kDouble}},
      {DT::kFloat16, {DT::kFloat, DT::kDouble}},
      {DT::kBFloat16, {DT::kFloat, DT::kDouble}},
      {DT::kFloat, {DT::kDouble}},
  };
  return kExact;
}

bool exact(DT from, DT to) {
  if (from == to) return from != DT::kUndefined;
  auto it = exact_widenings().find(from);
  return it != exact_widenings().end() && it->second.count(to) > 0;
}

// The `to` type of a plain Cast, or kUndefined.
DT cast_to(const ir::Node& n) {
  if (!GraphMatcher::is(n, "Cast", 1) || n.inputs[0].empty()) return DT::kUndefined;
  const ir::Attribute* to = n.find_attribute("to");
  return to ? static_cast<DT>(to->i) : DT::kUndefined;
}

DT tensor_type(const ir::Graph& g, const std::string& v) {
  const ir::ValueType* t = g.type_of(v);
  return t && t->kind == ValueKind::kTensor ? t->dtype : DT::kUndefined;
}

class CastElimination : public Pass {
 public:
  std::string name() const override { return "cast_elimination"; }
  OptimizationLevel level() const override { return OptimizationLevel::kBasic; }

  Status run(ir::Graph& graph, PassContext& ctx, bool* changed) override {
    struct Rewrite {
      const ir::Node* cast;
      const ir::Node* inner;  // the Cast before it when collapsing a pair, else null
      bool remove_inner;
    };
    std::vector<Rewrite> rewrites;
    {
      GraphMatcher m(graph);
      std::set<ir::NodeId> taken;
      for (const auto& np : graph.nodes()) {
        const ir::Node& n = *np;
        const DT to = cast_to(n);
        if (to == DT::kUndefined || taken.count(n.id)) continue;
        const DT from = tensor_type(graph, n.inputs[0]);
        if (from == to) {
          taken.insert(n.id);
          rewrites.push_back({&n, nullptr, false});
          continue;
        }
        const ir::Node* inner = m.producer(n.inputs[0]);
        if (inner == nullptr || cast_to(*inner) == DT::kUndefined || taken.count(inner->id)) continue;
        const DT x_type = tensor_type(graph, inner->inputs[0]);
        if (x_type == DT::kUndefined || !exact(x_type, cast_to(*inner)) || to == DT::kString) continue;
        const bool sole = m.sole_consumer(n.inputs[0]) == &n;
        taken.insert(n.id);
        if (sole) taken.insert(inner->id);
        rewrites.push_back({&n, inner, sole});
      }
    }
    for (const Rewrite& r : rewrites) {
      const ir::Node& n = *r.cast;
      GraphPatch patch(graph, name() + " at '" + n.label() + "'");
      const std::string x = r.inner ? r.inner->inputs[0] : n.inputs[0];
      if (tensor_type(graph, x) == cast_to(n)) {
        patch.replace_uses(n.outputs[0], x);
        patch.remove_node(n.id);
      } else {
        patch.set_input(n.id, 0, x);
      }
      if (r.remove_inner) patch.remove_node(r.inner->id);
      commit_or_skip(patch, ctx, changed);
    }
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<Pass> make_cast_elimination() { return std::make_unique<CastElimination>(); }

}  // namespace loom::transform
