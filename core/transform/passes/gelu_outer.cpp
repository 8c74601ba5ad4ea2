#include "transform/passes/gelu_outer.h"

namespace loom::transform {
namespace {

bool is_mul_of(const ir::Node& n, const std::string& a, const std::string& b) {
  return GraphMatcher::is(n, "Mul", 2) &&
         ((n.inputs[0] == a && n.inputs[1] == b) || (n.inputs[0] == b && n.inputs[1] == a));
}

}  // namespace

std::optional<GeluOuter> match_gelu_outer(const GraphMatcher& m, const std::string& t, const std::string& x,
                                          const ir::Node* not_half) {
  const ir::Node* a = m.sole_consumer(t);
  if (!a || !m.op_with_scalar(*a, "Add", t, 1.0)) return std::nullopt;
  const std::string& av = a->outputs[0];
  const ir::Node* m1 = m.sole_consumer(av);
  if (!m1) return std::nullopt;
  const std::string& mv = m1->outputs[0];
  GeluOuter out;
  if (is_mul_of(*m1, av, x) || m.op_with_scalar(*m1, "Mul", av, 0.5)) {
    // (x * (1 + t)) * 0.5 or x * ((1 + t) * 0.5)
    const ir::Node* m2 = m.sole_consumer(mv);
    if (!m2) return std::nullopt;
    const bool half_last = is_mul_of(*m1, av, x) && m.op_with_scalar(*m2, "Mul", mv, 0.5);
    const bool x_last = !is_mul_of(*m1, av, x) && is_mul_of(*m2, mv, x);
    if (!half_last && !x_last) return std::nullopt;
    out.nodes = {a->id, m1->id, m2->id};
    out.y = m2->outputs[0];
    out.name = m2->name;
    return out;
  }
  // (x * 0.5) * (1 + t): the other operand of m1 is Mul(x, 0.5) read only there.
  if (!GraphMatcher::is(*m1, "Mul", 2)) return std::nullopt;
  const std::string& h = m1->inputs[0] == av ? m1->inputs[1] : m1->inputs[0];
  const ir::Node* hn = m.producer(h);
  if (!hn || hn == not_half || m.sole_consumer(h) != m1 || !m.op_with_scalar(*hn, "Mul", x, 0.5))
    return std::nullopt;
  out.nodes = {a->id, hn->id, m1->id};
  out.y = mv;
  out.name = m1->name;
  return out;
}

}  // namespace loom::transform
