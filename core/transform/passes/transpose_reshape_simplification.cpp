// Transpose / Reshape / Squeeze chain simplification (basic):
// - Transpose(Transpose(x, p1), p2) -> Transpose(x, p) with p[i] = p1[p2[i]],
//   or x itself when p is the identity; a Transpose with an identity perm
//   is removed;
// - Reshape(Reshape(x, s1), s2) -> Reshape(x, s2) when s2 is a constant
//   whose meaning does not depend on the intermediate: no 0 ("copy the
//   intermediate's dim") unless the outer Reshape has allowzero = 1 (then 0
//   is a literal 0). -1 is fine: both tensors hold the same element count;
// - Squeeze(Unsqueeze(x, a), a) and Unsqueeze(Squeeze(x, a), a) -> x (both
//   nodes' axes refer to the same rank: the intermediate's in the first case,
//   x's in the second).
// Chains are rewritten only when the intermediate is read by the second node
// alone (removing the first node may drop a shape error it would raise),
// except a Transpose pair that cancels: its readers then read x, and the
// first Transpose stays for its other readers.
#include <algorithm>
#include <numeric>
#include <set>

#include "base/logging.h"
#include "transform/framework/graph_matcher.h"
#include "transform/framework/graph_patch.h"
#include "transform/passes/passes.h"
#include "transform/framework/pattern_pass.h"

namespace loom::transform {
namespace {

int64_t rank_of(const ir::Graph& g, const std::string& v) {
  const ir::ValueType* t = g.type_of(v);
  return t && t->kind == ValueKind::kTensor && t->has_shape ? static_cast<int64_t>(t->dims.size()) : -1;
}

// The perm of a Transpose (the default reverses the axes, which needs the rank).
std::optional<std::vector<int64_t>> perm_of(const ir::Graph& g, const ir::Node& n) {
  if (!GraphMatcher::is(n, "Transpose", 1) || n.inputs[0].empty()) return std::nullopt;
  std::vector<int64_t> p;
  if (const ir::Attribute* a = n.find_attribute("perm")) {
    p = a->ints;
  } else {
    const int64_t r = rank_of(g, n.inputs[0]);
    if (r < 0) return std::nullopt;
    for (int64_t i = r - 1; i >= 0; --i) p.push_back(i);
  }
  std::vector<int64_t> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i)
    if (sorted[i] != static_cast<int64_t>(i)) return std::nullopt;
  return p;
}

bool is_identity(const std::vector<int64_t>& p) {
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] != static_cast<int64_t>(i)) return false;
  return true;
}

// The sorted axes of a Squeeze / Unsqueeze (attribute before opset 13, input
// from 13), normalised when `rank` is known; nullopt when absent or not constant.
std::optional<std::vector<int64_t>> axes_of(const ir::Graph& g, const ir::Node& n, int64_t rank) {
  std::optional<std::vector<int64_t>> axes;
  if (n.opset < 13) {
    if (n.inputs.size() != 1) return std::nullopt;
    if (const ir::Attribute* a = n.find_attribute("axes")) axes = a->ints;
  } else if (n.inputs.size() == 2) {
    axes = int_constant(g, n.inputs[1]);
  }
  if (!axes || axes->empty()) return std::nullopt;
  if (rank >= 0)
    for (int64_t& a : *axes)
      if (a < 0) a += rank;
  std::sort(axes->begin(), axes->end());
  return axes;
}

enum class Kind { kDropTranspose, kTransposePair, kReshapePair, kSqueezePair };

struct Rewrite {
  Kind kind;
  const ir::Node* outer;
  const ir::Node* inner;  // null for kDropTranspose
  std::vector<int64_t> perm;
  // The inner node is read by others too: it is neither removed nor
  // reserved (another outer may read through it as well), and is not
  // dereferenced after matching (an earlier rewrite may remove it).
  bool inner_shared = false;
  // The value the rewrite reads: the inner node's input (the outer's for
  // kDropTranspose), copied when matched.
  std::string x;
};

std::optional<Rewrite> match(const GraphMatcher& m, const ir::Node& n) {
  const ir::Graph& g = m.graph();
  if (auto p2 = perm_of(g, n)) {
    const ir::Node* inner = m.producer(n.inputs[0]);
    if (inner)
      if (auto p1 = perm_of(g, *inner); p1 && p1->size() == p2->size()) {
        std::vector<int64_t> p(p2->size());
        for (size_t i = 0; i < p.size(); ++i) p[i] = (*p1)[(*p2)[i]];
        if (m.sole_consumer(n.inputs[0]) == &n)
          return Rewrite{Kind::kTransposePair, &n, inner, p, false, inner->inputs[0]};
        // The inner Transpose has other readers and stays; a pair that
        // cancels still reads x directly (layouts: one NHWC -> NCHW result
        // read by several NCHW -> NHWC Transposes).
        if (is_identity(p)) return Rewrite{Kind::kTransposePair, &n, inner, p, true, inner->inputs[0]};
      }
    if (is_identity(*p2)) return Rewrite{Kind::kDropTranspose, &n, nullptr, {}, false, n.inputs[0]};
    return std::nullopt;
  }
  if (GraphMatcher::is(n, "Reshape", 2)) {
    const ir::Node* inner = m.producer(n.inputs[0]);
    if (!inner || !GraphMatcher::is(*inner, "Reshape", 2) || m.sole_consumer(n.inputs[0]) != &n) return std::nullopt;
    auto shape = int_constant(g, n.inputs[1]);
    if (!shape) return std::nullopt;
    const ir::Attribute* allowzero = n.find_attribute("allowzero");
    if ((!allowzero || allowzero->i == 0) && std::count(shape->begin(), shape->end(), 0) > 0) return std::nullopt;
    return Rewrite{Kind::kReshapePair, &n, inner, {}, false, inner->inputs[0]};
  }
  const bool squeeze = n.op_type == "Squeeze", unsqueeze = n.op_type == "Unsqueeze";
  if ((squeeze || unsqueeze) && n.domain.empty() && n.outputs.size() == 1 && !n.inputs.empty()) {
    const ir::Node* inner = m.producer(n.inputs[0]);
    if (!inner || !inner->domain.empty() || inner->op_type != (squeeze ? "Unsqueeze" : "Squeeze") ||
        inner->outputs.size() != 1 || m.sole_consumer(n.inputs[0]) != &n)
      return std::nullopt;
    // Both axes lists refer to this rank (see the header comment).
    const int64_t rank = rank_of(g, squeeze ? n.inputs[0] : inner->inputs[0]);
    auto a = axes_of(g, n, rank), b = axes_of(g, *inner, rank);
    if (!a || !b || *a != *b) return std::nullopt;
    return Rewrite{Kind::kSqueezePair, &n, inner, {}, false, inner->inputs[0]};
  }
  return std::nullopt;
}

class TransposeReshapeSimplification : public Pass {
 public:
  std::string name() const override { return "transpose_reshape_simplification"; }
  OptimizationLevel level() const override { return OptimizationLevel::kBasic; }

  Status run(ir::Graph& graph, PassContext& ctx, bool* changed) override {
    std::vector<Rewrite> rewrites;
    {
      GraphMatcher m(graph);
      std::set<ir::NodeId> taken;
      for (const auto& n : graph.nodes()) {
        auto r = match(m, *n);
        if (!r || taken.count(r->outer->id) || (r->inner && !r->inner_shared && taken.count(r->inner->id))) continue;
        taken.insert(r->outer->id);
        if (r->inner && !r->inner_shared) taken.insert(r->inner->id);
        rewrites.push_back(std::move(*r));
      }
    }
    for (const Rewrite& r : rewrites) {
      const ir::Node& n = *r.outer;
      GraphPatch patch(graph, name() + " at '" + n.label() + "'");
      const std::string& x = r.x;
      const bool vanishes = r.kind == Kind::kDropTranspose || r.kind == Kind::kSqueezePair ||
                            (r.kind == Kind::kTransposePair && is_identity(r.perm));
      if (vanishes) {
        patch.replace_uses(n.outputs[0], x);
        patch.remove_node(n.id);
      } else if (r.kind == Kind::kTransposePair) {
        ir::Node t = n;
        t.inputs = {x};
        t.attributes.clear();
        ir::Attribute perm;
        perm.name = "perm";
        perm.type = ir::AttrType::kInts;
        perm.ints = r.perm;
        t.attributes.push_back(std::move(perm));
        patch.add_node(std::move(t));
        patch.remove_node(n.id);
      } else {
        patch.set_input(n.id, 0, x);
      }
      if (r.inner && !r.inner_shared) patch.remove_node(r.inner->id);
      commit_or_skip(patch, ctx, changed);
    }
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<Pass> make_transpose_reshape_simplification() {
  return std::make_unique<TransposeReshapeSimplification>();
}

}  // namespace loom::transform
