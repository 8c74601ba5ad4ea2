// fuse_mish_patterns (pattern_fusion.h): Softplus(x) -> Tanh -> Mul(x, .)
// into one Mish node.
#include <map>
#include <optional>
#include <set>

#include "pattern_fusion.h"

namespace loom::onednn {
namespace {

// Readers of each value and the partition's outputs, to tell a value read
// by exactly one node inside the partition.
class Readers {
 public:
  explicit Readers(const PartitionSpec& spec) : outputs_(spec.outputs.begin(), spec.outputs.end()) {
    for (size_t i = 0; i < spec.nodes.size(); ++i)
      for (const std::string& v : spec.nodes[i].inputs)
        if (!v.empty()) readers_[v].push_back(i);
  }
  std::optional<size_t> sole(const std::string& v) const {
    if (outputs_.count(v)) return std::nullopt;
    auto it = readers_.find(v);
    if (it == readers_.end() || it->second.size() != 1) return std::nullopt;
    return it->second[0];
  }

 private:
  std::set<std::string> outputs_;
  std::map<std::string, std::vector<size_t>> readers_;
};

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
  const Readers readers(spec);
  for (size_t s = 0; s < spec.nodes.size(); ++s) {
    const NodeSpec& softplus = spec.nodes[s];
    if (!float_unary(softplus, "Softplus")) continue;
    const std::string& x = softplus.inputs[0];
    const auto t = readers.sole(softplus.outputs[0]);
    if (!t || !float_unary(spec.nodes[*t], "Tanh")) continue;
    const auto m = readers.sole(spec.nodes[*t].outputs[0]);
    if (!m) continue;
    const NodeSpec& mul = spec.nodes[*m];
    const std::string& th = spec.nodes[*t].outputs[0];
    if (!mul.is_onnx_op("Mul") || mul.inputs.size() != 2 || mul.outputs.size() != 1 ||
        !((mul.inputs[0] == x && mul.inputs[1] == th) || (mul.inputs[1] == x && mul.inputs[0] == th)))
      continue;
    if (removed.count(s) || removed.count(*t) || removed.count(*m)) continue;
    replacement.emplace(*m, mish_node(softplus, mul));
    removed.insert({s, *t, *m});
  }
  apply_rewrites(spec, replacement, removed);
}

}  // namespace loom::onednn
