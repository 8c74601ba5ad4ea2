// MatMul transpose / scale fusion (extended), as ONNX Runtime's
// MatMulTransposeFusion and MatMulScaleFusion: around a float MatMul (or a
// com.microsoft FusedMatMul without batch transposes)
//  - a Transpose swapping only the last two dims of an operand, read only by
//    the MatMul, is dropped and toggles transA / transB;
//  - a Mul or Div of an operand by a one-element constant (x * s, s * x,
//    x / s), read only by the MatMul, is dropped and scales alpha;
//  - a Mul or Div of the result by such a constant, when the result is read
//    only there, is dropped and scales alpha;
// and the result is com.microsoft FusedMatMul. One rewrite per MatMul per
// round; the pass manager's next round fuses what sits further out.
// Unlike ORT, a scale is fused only where the result stays bit-identical:
// Mul of the result by any s (FusedMatMul computes alpha * (A x B)), and
// otherwise a power of two (x / s = x * (1 / s) and (a * s) x b = s * (a x b)
// exactly then). BERT's 1 / sqrt(64) qualifies.
#include <cmath>

#include "transform/framework/fused_node.h"
#include "transform/framework/graph_matcher.h"
#include "transform/framework/graph_patch.h"
#include "transform/passes/passes.h"
#include "transform/framework/pattern_pass.h"

namespace loom::transform {
namespace {

struct FusedMatMulMatch {
  std::vector<ir::NodeId> nodes;
  std::string inputs[2], output, name;
  int64_t trans[2] = {0, 0};
  float alpha = 1.f;
};

// A Transpose of a value of known rank r >= 2 with perm = (0, .., r-3, r-1, r-2).
bool swaps_last_two(const GraphMatcher& m, const ir::Node& t) {
  if (!GraphMatcher::is(t, "Transpose", 1)) return false;
  const ir::Attribute* perm = t.find_attribute("perm");
  const ir::ValueType* type = m.graph().type_of(t.inputs[0]);
  if (!perm || perm->type != ir::AttrType::kInts || !type || !type->has_shape) return false;
  const size_t r = type->dims.size();
  if (r < 2 || perm->ints.size() != r) return false;
  for (size_t i = 0; i + 2 < r; ++i)
    if (perm->ints[i] != static_cast<int64_t>(i)) return false;
  return perm->ints[r - 2] == static_cast<int64_t>(r - 1) && perm->ints[r - 1] == static_cast<int64_t>(r - 2);
}

bool power_of_two(float s) {
  int exp = 0;
  return std::isfinite(s) && s != 0.f && std::fabs(std::frexp(s, &exp)) == 0.5f && std::isnormal(1.f / s);
}

// For a Mul / Div node reading `value` by a one-element float constant that
// does not change the result's shape, the factor it applies (Div: 1 / s, and
// only with the constant as divisor). `any_mul`: any Mul factor; otherwise
// (and for Div) only powers of two.
std::optional<float> scale_of(const GraphMatcher& m, const ir::Node& n, const std::string& value, bool any_mul) {
  for (const char* op : {"Mul", "Div"}) {
    auto s = m.scalar_operand(n, op, value);
    if (!s) continue;
    const std::string& c = n.inputs[0] == value ? n.inputs[1] : n.inputs[0];
    const size_t const_rank = m.constant_dims(c)->size();
    const ir::ValueType* t = m.graph().type_of(value);
    if (const_rank > 0 && !(t && t->has_shape && t->dims.size() >= const_rank)) return std::nullopt;
    if (std::string(op) == "Div") {
      if (!power_of_two(*s)) return std::nullopt;
      return 1.f / *s;
    }
    if (!any_mul && !power_of_two(*s)) return std::nullopt;
    return *s;
  }
  return std::nullopt;
}

std::optional<FusedMatMulMatch> match(const GraphMatcher& m, const ir::Node& mm) {
  const bool plain = GraphMatcher::is(mm, "MatMul", 2);
  const bool fused = mm.op_type == "FusedMatMul" && mm.domain == kMicrosoftDomain && mm.inputs.size() == 2 &&
                     mm.outputs.size() == 1 && mm.int_attr("transBatchA", 0) == 0 &&
                     mm.int_attr("transBatchB", 0) == 0;
  if (!plain && !fused) return std::nullopt;
  if (!m.is_float(mm.outputs[0])) return std::nullopt;
  FusedMatMulMatch out;
  out.name = mm.name;
  out.output = mm.outputs[0];
  out.nodes = {mm.id};
  if (fused) {
    out.trans[0] = mm.int_attr("transA", 0) != 0;
    out.trans[1] = mm.int_attr("transB", 0) != 0;
    out.alpha = mm.float_attr("alpha", 1.f);
  }
  bool any = false;
  for (size_t k = 0; k < 2; ++k) {
    out.inputs[k] = mm.inputs[k];
    if (mm.inputs[0] == mm.inputs[1]) continue;
    const ir::Node* p = m.producer(mm.inputs[k]);
    if (!p || m.sole_consumer(mm.inputs[k]) != &mm) continue;
    if (swaps_last_two(m, *p)) {
      out.inputs[k] = p->inputs[0];
      out.trans[k] = !out.trans[k];
    } else if (p->inputs.size() == 2 && !m.is_float_constant(p->inputs[0]) && m.is_float(p->inputs[0])) {
      auto s = scale_of(m, *p, p->inputs[0], false);
      if (!s) continue;
      out.inputs[k] = p->inputs[0];
      out.alpha *= *s;
    } else if (p->inputs.size() == 2 && !m.is_float_constant(p->inputs[1]) && m.is_float(p->inputs[1])) {
      auto s = scale_of(m, *p, p->inputs[1], false);
      if (!s) continue;
      out.inputs[k] = p->inputs[1];
      out.alpha *= *s;
    } else {
      continue;
    }
    out.nodes.push_back(p->id);
    any = true;
  }
  if (const ir::Node* after = m.sole_consumer(mm.outputs[0])) {
    if (auto s = scale_of(m, *after, mm.outputs[0], power_of_two(out.alpha))) {
      out.alpha *= *s;
      out.output = after->outputs[0];
      out.nodes.push_back(after->id);
      any = true;
    }
  }
  if (!any) return std::nullopt;
  return out;
}

class FusedMatMulFusion : public Pass {
 public:
  std::string name() const override { return "fused_matmul_fusion"; }
  OptimizationLevel level() const override { return OptimizationLevel::kExtended; }

  Status run(ir::Graph& graph, PassContext& ctx, bool* changed) override {
    for (const FusedMatMulMatch& f : disjoint_matches<FusedMatMulMatch>(graph, match)) {
      GraphPatch patch(graph, name() + " at '" + f.name + "'");
      ir::Node n = fused_node(graph, "FusedMatMul", kMicrosoftDomain, {f.inputs[0], f.inputs[1]}, {f.output},
                              patch.fresh_name(f.name.empty() ? "FusedMatMul" : f.name + "/FusedMatMul"));
      set_float_attr(n, "alpha", f.alpha);
      set_int_attr(n, "transA", f.trans[0]);
      set_int_attr(n, "transB", f.trans[1]);
      replace_with_fused(patch, graph, ctx, changed, f.nodes, std::move(n));
    }
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<Pass> make_fused_matmul_fusion() { return std::make_unique<FusedMatMulFusion>(); }

}  // namespace loom::transform
