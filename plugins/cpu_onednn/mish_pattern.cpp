// fuse_mish_patterns (pattern_fusion.h): Softplus(x) -> Tanh -> Mul(x, .)
// into one Mish node.
#include <map>
#include <optional>
#include <set>

#include "pattern_fusion.h"
#include "pattern_matcher.h"

namespace loom::onednn {
namespace {

bool float_unary(const NodeSpec& n, const char* op) {
  return n.is_onnx_op(op) && n.inputs.size() == 1 && n.outputs.size() == 1 && !n.outputs[0].empty() &&
         n.input_dtypes[0] == LOOM_DTYPE_FLOAT;
}

NodeSpec mish_node(const NodeSpec& softplus, const NodeSpec& mul) {
  NodeSpec m;
  m.op_type = "Mish";
  m.opset = 18;
  m.name = mul.name + " (x * Tanh(Softplus(x)))";
  m.inputs = {softplus.inputs[0]};
  m.input_dtypes = {LOOM_DTYPE_FLOAT};
  m.input_shapes = {softplus.input_shapes[0]};
  m.input_is_constant = {false};
  m.outputs = {mul.outputs[0]};
  m.output_dtypes = {LOOM_DTYPE_FLOAT};
  return m;
}

}  // namespace

void fuse_mish_patterns(PartitionSpec& spec) {
  std::map<size_t, NodeSpec> replacement;  // at the Mul's index (the pattern's last node)
  std::set<size_t> removed;
  {
    const Matcher matcher(spec);
    for (size_t s = 0; s < spec.nodes.size(); ++s) {
      const NodeSpec& softplus = spec.nodes[s];
      if (!float_unary(softplus, "Softplus")) continue;
      const auto t = matcher.sole_consumer(softplus.outputs[0]);
      if (!t || !float_unary(spec.nodes[*t], "Tanh")) continue;
      const auto m = matcher.sole_consumer(spec.nodes[*t].outputs[0]);
      if (!m || !matcher.is_mul_by(*m, spec.nodes[*t].outputs[0], softplus.inputs[0])) continue;
      if (removed.count(s) || removed.count(*t) || removed.count(*m)) continue;
      replacement.emplace(*m, mish_node(softplus, spec.nodes[*m]));
      removed.insert({s, *t, *m});
    }
  }
  apply_rewrites(spec, replacement, removed);
}

}  // namespace loom::onednn
