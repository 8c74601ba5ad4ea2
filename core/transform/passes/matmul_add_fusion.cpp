// MatMul + Add fusion (extended), as ONNX Runtime's MatMulAddFusion for the
// plain 2-D case: MatMul(A, B) with A a float matrix (rank 2 known) and B a
// constant matrix [K, N], whose output is read only by an Add of a constant
// bias of shape [N] or [1, N], becomes Gemm(A, B, bias) (alpha = beta = 1).
// Other ranks stay MatMul + Add: Gemm is 2-D only, and a reshape around it
// would cost more than the add it saves.
#include "transform/framework/fused_node.h"
#include "transform/framework/graph_matcher.h"
#include "transform/framework/graph_patch.h"
#include "transform/passes/passes.h"
#include "transform/framework/pattern_pass.h"

namespace loom::transform {
namespace {

struct MatMulAddMatch {
  std::vector<ir::NodeId> nodes;
  std::string a, b, bias, y, name;
};

std::optional<MatMulAddMatch> match(const GraphMatcher& m, const ir::Node& mm) {
  if (!GraphMatcher::is(mm, "MatMul", 2)) return std::nullopt;
  const ir::Graph& g = m.graph();
  // Gemm-7 on: unidirectional broadcast of C without the `broadcast` attribute.
  auto opset = g.opsets.find("");
  if (opset == g.opsets.end() || opset->second < 7) return std::nullopt;
  const std::string &a = mm.inputs[0], &b = mm.inputs[1], &y = mm.outputs[0];
  const ir::ValueType* ta = g.type_of(a);
  if (!m.is_float(a) || !ta || !ta->has_shape || ta->dims.size() != 2) return std::nullopt;
  const auto bd = m.constant_dims(b);
  if (!bd || bd->size() != 2 || !m.is_float_constant(b)) return std::nullopt;
  const ir::Node* add = m.sole_consumer(y);
  if (!add || !GraphMatcher::is(*add, "Add", 2) || add->inputs[0] == add->inputs[1]) return std::nullopt;
  const std::string& bias = add->inputs[0] == y ? add->inputs[1] : add->inputs[0];
  const auto cd = m.constant_dims(bias);
  if (!cd || !m.is_float_constant(bias)) return std::nullopt;
  const int64_t n = (*bd)[1];
  if (*cd != Dims{n} && *cd != Dims{1, n}) return std::nullopt;
  return MatMulAddMatch{{mm.id, add->id}, a, b, bias, add->outputs[0], mm.name};
}

class MatMulAddFusion : public Pass {
 public:
  std::string name() const override { return "matmul_add_fusion"; }
  OptimizationLevel level() const override { return OptimizationLevel::kExtended; }

  Status run(ir::Graph& graph, PassContext& ctx, bool* changed) override {
    for (const MatMulAddMatch& f : disjoint_matches<MatMulAddMatch>(graph, match)) {
      GraphPatch patch(graph, name() + " at '" + f.name + "'");
      patch.add_node(fused_node(graph, "Gemm", "", {f.a, f.b, f.bias}, {f.y},
                                patch.fresh_name(f.name.empty() ? "Gemm" : f.name + "/Gemm")));
      for (ir::NodeId id : f.nodes) patch.remove_node(id);
      commit_fusion(patch, graph, ctx, changed);
    }
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<Pass> make_matmul_add_fusion() { return std::make_unique<MatMulAddFusion>(); }

}  // namespace loom::transform
