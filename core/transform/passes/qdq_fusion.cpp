// QDQ fusion, as ONNX Runtime's QDQ selector/action transformer: in a QDQ
// model (quantize_static's format, `loom quantize`), a float Conv or MatMul
// between DequantizeLinear inputs and a QuantizeLinear output stands for an
// int8 op; it becomes that op, reading the quantized tensors directly:
//
//   DQ(x) -> Conv(., DQ(w) [, DQ(b int32)]) -> Q   =>  QLinearConv
//   DQ(a) -> MatMul(., DQ(b))              -> Q   =>  QLinearMatMul
//
// Conditions: per-tensor activations (x, a, y) of uint8 / int8; Conv
// weights constant, per tensor or per output channel (axis 0); MatMul's b
// per tensor, or per column (axis 1 of a 2-D b); a Conv bias, when
// present, int32 with zero points 0 and scale x_scale * w_scale (the only
// scale QLinearConv's bias can have); the Conv / MatMul output read only by
// the Q. The DQ nodes stay for their other readers, if any (dead code
// elimination removes the rest).
//
// Not exact: the unfused graph rounds the float result of float math once
// at the Q; the fused op rounds the integer accumulator times the combined
// scale. They agree to one quantization step, which is why the fusion is
// at the extended level, and why the reference EP's oracle for a QDQ model
// is the unfused graph (optimization disabled).
//
// It runs before constant folding, which would otherwise fold the weights'
// DequantizeLinear into float initializers first.
#include <cmath>

#include "transform/framework/fused_node.h"
#include "transform/framework/graph_matcher.h"
#include "transform/framework/graph_patch.h"
#include "transform/passes/passes.h"
#include "transform/framework/pattern_pass.h"
#include "transform/passes/quantization_params.h"

namespace loom::transform {
namespace {

struct QdqMatch {
  std::vector<ir::NodeId> nodes;  // the Conv / MatMul and the Q
  const ir::Node* op = nullptr;
  QuantizationParams x, w, y;
  std::optional<QuantizationParams> bias;
};

bool activation(const std::optional<QuantizationParams>& p) {
  return p && p->per_tensor() && p->eight_bit();
}

// The int32 bias's scale equals x_scale * w_scale (per channel when w is),
// as the quantizer wrote it.
bool bias_matches(const QuantizationParams& b, const QuantizationParams& x, const QuantizationParams& w) {
  if (b.type != DType::kInt32 || !b.symmetric()) return false;
  if (!b.per_tensor() && (b.scale.size() != w.scale.size() || b.axis != 0)) return false;
  if (b.per_tensor() && !w.per_tensor()) return false;
  for (size_t c = 0; c < b.scale.size(); ++c) {
    const double want = static_cast<double>(x.scale[0]) * static_cast<double>(w.scale[c]);
    if (std::fabs(b.scale[c] - want) > 1e-6 * std::fabs(want)) return false;
  }
  return true;
}

std::optional<QdqMatch> match(const GraphMatcher& m, const ir::Node& op) {
  const bool conv = op.op_type == "Conv" && op.domain.empty() && (op.inputs.size() == 2 || op.inputs.size() == 3);
  const bool matmul = GraphMatcher::is(op, "MatMul", 2);
  if ((!conv && !matmul) || op.outputs.size() != 1 || !m.is_float(op.outputs[0])) return std::nullopt;
  QdqMatch out;
  auto x = dequantized_from(m, op.inputs[0]);
  auto w = dequantized_from(m, op.inputs[1]);
  if (!activation(x) || !w || !w->eight_bit()) return std::nullopt;
  const ir::ValueType* wt = m.graph().type_of(w->quantized);
  if (conv) {
    // Weights constant (QLinearConv kernels pack them), per output channel at most.
    if (!m.graph().is_initializer(w->quantized) || m.graph().is_graph_input(w->quantized)) return std::nullopt;
    if (!w->per_tensor() && w->axis != 0) return std::nullopt;
    if (op.inputs.size() == 3 && !op.inputs[2].empty()) {
      out.bias = dequantized_from(m, op.inputs[2]);
      if (!out.bias || !m.graph().is_initializer(out.bias->quantized) || !bias_matches(*out.bias, *x, *w))
        return std::nullopt;
    }
  } else if (!w->per_tensor() && (wt == nullptr || !wt->has_shape || wt->dims.size() != 2 || w->axis != 1)) {
    return std::nullopt;
  }
  const ir::Node* q = m.sole_consumer(op.outputs[0]);
  if (q == nullptr || q->inputs.empty() || q->inputs[0] != op.outputs[0]) return std::nullopt;
  auto y = quantization_params(m, *q, /*quantize=*/true);
  if (!activation(y)) return std::nullopt;
  out.nodes = {op.id, q->id};
  out.op = &op;
  out.x = *x;
  out.w = *w;
  out.y = *y;
  return out;
}

class QdqFusion : public Pass {
 public:
  std::string name() const override { return "qdq_fusion"; }
  OptimizationLevel level() const override { return OptimizationLevel::kExtended; }

  Status run(ir::Graph& graph, PassContext& ctx, bool* changed) override {
    // Copy what the rewrite needs: the matched nodes die with the first commit.
    struct Rewrite {
      QdqMatch match;
      ir::Node op;
      std::string output;
    };
    std::vector<Rewrite> rewrites;
    for (QdqMatch& q : disjoint_matches<QdqMatch>(graph, match))
      rewrites.push_back({q, *q.op, q.y.node->outputs[0]});
    for (Rewrite& r : rewrites) {
      QdqMatch& q = r.match;
      const bool conv = r.op.op_type == "Conv";
      GraphPatch patch(graph, name() + " at '" + r.op.name + "'");
      auto add = [&patch](const std::string& hint, Tensor t) { return patch.add_initializer(hint, std::move(t)); };
      std::vector<std::string> inputs = {
          q.x.quantized, q.x.scale_value, zero_point_or_new(q.x, add),
          q.w.quantized, q.w.scale_value, zero_point_or_new(q.w, add),
          q.y.scale_value, zero_point_or_new(q.y, add)};
      if (q.bias) inputs.push_back(q.bias->quantized);
      const std::string op = conv ? "QLinearConv" : "QLinearMatMul";
      ir::Node n = fused_node(graph, op, "", std::move(inputs), {r.output},
                              patch.fresh_name(r.op.name.empty() ? op : r.op.name + "_quant"));
      if (conv) n.attributes = r.op.attributes;
      // QLinearConv / QLinearMatMul exist from opset 10 (the default domain's
      // opset is the graph's, at least that of the Q / DQ nodes: 10).
      replace_with_fused(patch, graph, ctx, changed, q.nodes, std::move(n));
    }
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<Pass> make_qdq_fusion() { return std::make_unique<QdqFusion>(); }

}  // namespace loom::transform
