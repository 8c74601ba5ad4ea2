// The float-output end of a QDQ model, as ONNX Runtime's QDQ selector fuses
// it: a MatMul or Gemm between DequantizeLinear inputs whose float result is
// not quantized again (a classifier's logits) becomes com.microsoft
// MatMulIntegerToFloat, which reads the quantized tensors directly:
//
//   DQ(a) -> MatMul(., DQ(b const))                  =>  MatMulIntegerToFloat(a, b)
//   DQ(a) -> Gemm(., DQ(W const) [, C const [N]])    =>  MatMulIntegerToFloat(a, W or W^T, .., C)
//
// Conditions: a per tensor, uint8 / int8; b / W a constant uint8 / int8
// initializer of rank 2, per tensor or per output column (axis 1 of b,
// axis 0 of a transB W: transposing W makes its per-row scales per column,
// the same vectors); Gemm with alpha = beta = 1, transA = 0, C absent or a
// float constant of shape [N] (MatMulIntegerToFloat's bias). A result read
// by a QuantizeLinear (one whose result is used) is left alone: that is
// qdq_fusion's QLinearMatMul. The DQ nodes
// stay for their other readers, if any (dead code elimination removes the
// rest).
//
// Not exact: the unfused graph multiplies dequantized floats; the fused op
// scales the integer accumulator once. Only float rounding differs (no
// quantization step is lost), which is why this is an extended-level
// fusion. It runs before constant folding, which would otherwise fold the
// weights' DequantizeLinear into a float initializer first.
#include "transform/framework/fused_node.h"
#include "transform/framework/graph_matcher.h"
#include "transform/framework/graph_patch.h"
#include "transform/passes/passes.h"
#include "transform/framework/pattern_pass.h"
#include "transform/passes/quantization_params.h"

namespace loom::transform {
namespace {

struct IntegerMatMulMatch {
  std::vector<ir::NodeId> nodes;  // the MatMul / Gemm
  const ir::Node* op = nullptr;
  QuantizationParams a, b;
  bool transpose_b = false;
  std::string bias;  // "" when none
};

// Whether an output of `n` reaches a graph output or a node more than
// `depth` steps on (assumed live), through readers.
bool live_outputs(const GraphMatcher& m, const ir::Node& n, int depth) {
  for (const std::string& o : n.outputs) {
    if (o.empty()) continue;
    if (m.graph().is_graph_output(o)) return true;
    for (const ir::Node* reader : m.consumers(o))
      if (depth == 0 || live_outputs(m, *reader, depth - 1)) return true;
  }
  return false;
}

std::optional<IntegerMatMulMatch> match(const GraphMatcher& m, const ir::Node& op) {
  const bool gemm = op.op_type == "Gemm" && op.domain.empty() && (op.inputs.size() == 2 || op.inputs.size() == 3);
  const bool matmul = GraphMatcher::is(op, "MatMul", 2);
  if ((!gemm && !matmul) || op.outputs.size() != 1 || !m.is_float(op.outputs[0])) return std::nullopt;
  IntegerMatMulMatch out;
  if (gemm) {
    if (op.float_attr("alpha", 1.f) != 1.f || op.float_attr("beta", 1.f) != 1.f || op.int_attr("transA", 0) != 0)
      return std::nullopt;
    out.transpose_b = op.int_attr("transB", 0) != 0;
  }
  auto a = dequantized_from(m, op.inputs[0]);
  auto b = dequantized_from(m, op.inputs[1]);
  if (!a || !a->per_tensor() || !a->eight_bit() || !b || !b->eight_bit()) return std::nullopt;
  const ir::Graph& g = m.graph();
  if (!g.is_initializer(b->quantized) || g.is_graph_input(b->quantized)) return std::nullopt;
  const Dims& bd = g.initializers.at(b->quantized).dims();
  if (bd.size() != 2) return std::nullopt;
  const int64_t n = out.transpose_b ? bd[0] : bd[1];
  // Per output column: axis 1 of b, or axis 0 of a W that is transposed.
  if (!b->per_tensor() && b->axis != (out.transpose_b ? 0 : 1)) return std::nullopt;
  if (gemm && op.inputs.size() == 3 && !op.inputs[2].empty()) {
    const std::string& c = op.inputs[2];
    if (!g.is_initializer(c) || g.is_graph_input(c)) return std::nullopt;
    const Tensor& ct = g.initializers.at(c);
    if (ct.dtype() != DType::kFloat || ct.dims().size() != 1 || ct.dims()[0] != n) return std::nullopt;
    out.bias = c;
  }
  // Quantized again: QLinearMatMul's case (qdq_fusion), not this one. A
  // QuantizeLinear whose result is dead does not count: quantizers leave a
  // Q -> DQ pair on a model's float logits that nothing reads (dead code
  // elimination drops it, but only after constant folding has made DQ(W) a
  // float weight).
  for (const ir::Node* reader : m.consumers(op.outputs[0]))
    if (reader->op_type == "QuantizeLinear" && reader->domain.empty() && live_outputs(m, *reader, 3))
      return std::nullopt;
  out.nodes = {op.id};
  out.op = &op;
  out.a = *a;
  out.b = *b;
  return out;
}

// W [N, K] as [K, N] (one-byte elements).
Tensor transposed(const Tensor& w) {
  const int64_t rows = w.dims()[0], cols = w.dims()[1];
  Tensor t = Tensor::zeros(w.dtype(), {cols, rows}).value();
  const auto* src = static_cast<const uint8_t*>(w.data());
  auto* dst = static_cast<uint8_t*>(t.mutable_data());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) dst[c * rows + r] = src[r * cols + c];
  return t;
}

class MatMulIntegerToFloatFusion : public Pass {
 public:
  std::string name() const override { return "matmul_integer_to_float_fusion"; }
  OptimizationLevel level() const override { return OptimizationLevel::kExtended; }

  Status run(ir::Graph& graph, PassContext& ctx, bool* changed) override {
    // Copy what the rewrite needs: the matched nodes die with the first commit.
    struct Rewrite {
      IntegerMatMulMatch match;
      ir::Node op;
    };
    std::vector<Rewrite> rewrites;
    for (IntegerMatMulMatch& q : disjoint_matches<IntegerMatMulMatch>(graph, match)) rewrites.push_back({q, *q.op});
    for (Rewrite& r : rewrites) {
      IntegerMatMulMatch& q = r.match;
      GraphPatch patch(graph, name() + " at '" + r.op.name + "'");
      std::string b = q.b.quantized;
      if (q.transpose_b) b = patch.add_initializer(b + "_transposed", transposed(graph.initializers.at(b)));
      // Zero points are optional here: absent ones stay absent.
      std::vector<std::string> inputs = {q.a.quantized,      b, q.a.scale_value, q.b.scale_value,
                                         q.a.zero_point_value, q.b.zero_point_value};
      if (!q.bias.empty()) inputs.push_back(q.bias);
      while (!inputs.empty() && inputs.back().empty()) inputs.pop_back();
      const std::string op = "MatMulIntegerToFloat";
      ir::Node n = fused_node(graph, op, kMicrosoftDomain, std::move(inputs), {r.op.outputs[0]},
                              patch.fresh_name(r.op.name.empty() ? op : r.op.name + "_quant"));
      replace_with_fused(patch, graph, ctx, changed, q.nodes, std::move(n));
    }
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<Pass> make_matmul_integer_to_float_fusion() { return std::make_unique<MatMulIntegerToFloatFusion>(); }

}  // namespace loom::transform
