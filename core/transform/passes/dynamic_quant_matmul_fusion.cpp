// The linear layers ONNX Runtime's quantize_dynamic writes, fused as ONNX
// Runtime's MatMulIntegerToFloatFusion fuses them: the integer matmul, the
// cast of its accumulator, the scaling and the bias become one
// com.microsoft MatMulIntegerToFloat fed by the DynamicQuantizeLinear:
//
//   (x_q, x_scale, x_zp) = DynamicQuantizeLinear(x)
//   acc = MatMulInteger(x_q, W, x_zp [, W_zp])       W an int8 / uint8 constant [K, N]
//   y   = Mul(Cast<float>(acc), Mul(x_scale, W_scale)) [+ bias]
//     =>  y = MatMulIntegerToFloat(x_q, W, x_scale, W_scale, x_zp [, W_zp] [, bias])
//
// Either operand order of both Muls and of the Add. W_scale and W_zp are
// constants of 1 or N elements (rank <= 1: per tensor, or per column as
// quantize_dynamic's per_channel writes them); bias a float constant [N].
// The MatMulInteger's result and the Cast's are read by this chain alone
// (a value read elsewhere keeps the chain as it is); the scale Mul and the
// DynamicQuantizeLinear stay for any other readers (dead code elimination
// removes the rest; three projections share one DynamicQuantizeLinear).
//
// Same math: MatMulIntegerToFloat computes float(acc) * (x_scale * W_scale[n])
// + bias[n], the unfused graph's operations in the same order; only an EP
// that forms the product differently (a fused multiply-add) rounds
// differently, which is why this is an extended-level fusion.
#include "transform/framework/fused_node.h"
#include "transform/framework/graph_matcher.h"
#include "transform/framework/graph_patch.h"
#include "transform/passes/passes.h"
#include "transform/framework/pattern_pass.h"

namespace loom::transform {
namespace {

constexpr int64_t kOnnxFloat = 1;  // TensorProto.FLOAT, Cast's `to`

struct DynamicMatMulMatch {
  std::vector<ir::NodeId> nodes;  // MatMulInteger, Cast, Mul [, Add]
  std::string a, b, a_scale, b_scale, a_zero, b_zero, bias, output;
  std::string name;
};

// A constant (initializer, not an overridable input) of 1 or `n` elements
// and rank <= 1, or nullopt.
std::optional<Dims> per_tensor_or_column(const GraphMatcher& m, const std::string& v, int64_t n) {
  auto d = m.constant_dims(v);
  if (!d || d->size() > 1) return std::nullopt;
  const int64_t count = d->empty() ? 1 : (*d)[0];
  if (count != 1 && count != n) return std::nullopt;
  return d;
}

// The operand of binary node `n` that is not `value` (nullopt when both are).
std::optional<std::string> other_operand(const ir::Node& n, const std::string& value) {
  if (n.inputs[0] == value && n.inputs[1] != value) return n.inputs[1];
  if (n.inputs[1] == value && n.inputs[0] != value) return n.inputs[0];
  return std::nullopt;
}

std::optional<DynamicMatMulMatch> match(const GraphMatcher& m, const ir::Node& mmi) {
  if (mmi.op_type != "MatMulInteger" || !mmi.domain.empty() || mmi.inputs.size() < 2 || mmi.inputs.size() > 4 ||
      mmi.outputs.size() != 1)
    return std::nullopt;
  const ir::Graph& g = m.graph();
  // x_q and x_zp from one DynamicQuantizeLinear.
  const ir::Node* dql = m.producer(mmi.inputs[0]);
  if (!dql || !GraphMatcher::is(*dql, "DynamicQuantizeLinear", 1, 3) || dql->outputs[0] != mmi.inputs[0] ||
      dql->outputs[1].empty())
    return std::nullopt;
  const std::string a_zero = mmi.inputs.size() > 2 ? mmi.inputs[2] : "";
  if (!a_zero.empty() && a_zero != dql->outputs[2]) return std::nullopt;
  // W: a 2-D int8 / uint8 constant; W_zp of its type, 1 or N elements.
  const std::string& w = mmi.inputs[1];
  if (!g.is_initializer(w) || g.is_graph_input(w)) return std::nullopt;
  const Tensor& wt = g.initializers.at(w);
  if (wt.dims().size() != 2 || (wt.dtype() != DType::kInt8 && wt.dtype() != DType::kUint8)) return std::nullopt;
  const int64_t n = wt.dims()[1];
  const std::string b_zero = mmi.inputs.size() > 3 ? mmi.inputs[3] : "";
  if (!b_zero.empty()) {
    if (!per_tensor_or_column(m, b_zero, n) || g.initializers.at(b_zero).dtype() != wt.dtype()) return std::nullopt;
  }
  // Cast<float>(acc) -> Mul(., scale), each the only reader.
  const ir::Node* cast = m.sole_consumer(mmi.outputs[0]);
  if (!cast || !GraphMatcher::is(*cast, "Cast", 1) || cast->int_attr("to", 0) != kOnnxFloat) return std::nullopt;
  const ir::Node* mul = m.sole_consumer(cast->outputs[0]);
  if (!mul || !GraphMatcher::is(*mul, "Mul", 2)) return std::nullopt;
  const auto scale = other_operand(*mul, cast->outputs[0]);
  if (!scale) return std::nullopt;
  // scale = Mul(x_scale, W_scale), W_scale a float constant of 1 or N.
  const ir::Node* scale_mul = m.producer(*scale);
  if (!scale_mul || !GraphMatcher::is(*scale_mul, "Mul", 2)) return std::nullopt;
  const auto b_scale = other_operand(*scale_mul, dql->outputs[1]);
  if (!b_scale || !m.is_float_constant(*b_scale) || !per_tensor_or_column(m, *b_scale, n)) return std::nullopt;

  DynamicMatMulMatch out;
  out.nodes = {mmi.id, cast->id, mul->id};
  out.output = mul->outputs[0];
  // An Add of a float constant [N] that only this chain's result reaches.
  if (const ir::Node* add = m.sole_consumer(mul->outputs[0]); add && GraphMatcher::is(*add, "Add", 2)) {
    const auto bias = other_operand(*add, mul->outputs[0]);
    const auto dims = bias ? m.constant_dims(*bias) : std::nullopt;
    if (bias && m.is_float_constant(*bias) && dims && *dims == Dims{n}) {
      out.nodes.push_back(add->id);
      out.bias = *bias;
      out.output = add->outputs[0];
    }
  }
  out.a = mmi.inputs[0];
  out.b = w;
  out.a_scale = dql->outputs[1];
  out.b_scale = *b_scale;
  out.a_zero = a_zero;
  out.b_zero = b_zero;
  out.name = mmi.name;
  return out;
}

class DynamicQuantMatMulFusion : public Pass {
 public:
  std::string name() const override { return "dynamic_quant_matmul_fusion"; }
  OptimizationLevel level() const override { return OptimizationLevel::kExtended; }

  Status run(ir::Graph& graph, PassContext& ctx, bool* changed) override {
    // Matches hold names only: they outlive the nodes the commits remove.
    for (const DynamicMatMulMatch& q : disjoint_matches<DynamicMatMulMatch>(graph, match)) {
      GraphPatch patch(graph, name() + " at '" + q.name + "'");
      std::vector<std::string> inputs = {q.a, q.b, q.a_scale, q.b_scale, q.a_zero, q.b_zero, q.bias};
      while (!inputs.empty() && inputs.back().empty()) inputs.pop_back();
      const std::string op = "MatMulIntegerToFloat";
      ir::Node n = fused_node(graph, op, kMicrosoftDomain, std::move(inputs), {q.output},
                              patch.fresh_name(q.name.empty() ? op : q.name + "_to_float"));
      replace_with_fused(patch, graph, ctx, changed, q.nodes, std::move(n));
    }
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<Pass> make_dynamic_quant_matmul_fusion() { return std::make_unique<DynamicQuantMatMulFusion>(); }

}  // namespace loom::transform
