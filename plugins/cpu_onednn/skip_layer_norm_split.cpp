#include "skip_layer_norm_split.h"

#include <set>

namespace loom::onednn {
namespace {

// The skip has the input's shape as far as the claim-time shapes tell
// (unknown dims count as equal). Should it broadcast after all, Add's
// broadcasting computes what SkipLayerNormalization defines for a valid
// skip, so the split stays correct.
bool full_shape_skip(const NodeSpec& n) {
  const auto& in = n.input_shapes.size() > 1 ? n.input_shapes[0] : std::nullopt;
  const auto& skip = n.input_shapes.size() > 1 ? n.input_shapes[1] : std::nullopt;
  if (!in || !skip || in->size() != skip->size()) return false;
  for (size_t i = 0; i < in->size(); ++i)
    if ((*in)[i] >= 0 && (*skip)[i] >= 0 && (*in)[i] != (*skip)[i]) return false;
  return true;
}

NodeSpec add_node(const NodeSpec& skip_ln, const std::string& a, size_t a_index, const std::string& b, size_t b_index,
                  const std::string& out, const std::string& what) {
  NodeSpec n;
  n.op_type = "Add";
  n.opset = 14;
  n.name = skip_ln.name + " (" + what + ")";
  n.inputs = {a, b};
  n.input_dtypes = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_FLOAT};
  n.input_shapes = {skip_ln.input_shapes[a_index], skip_ln.input_shapes[b_index]};
  n.input_is_constant = {skip_ln.input_is_constant[a_index], skip_ln.input_is_constant[b_index]};
  if (auto c = skip_ln.constant_shapes.find(b_index); c != skip_ln.constant_shapes.end()) n.constant_shapes[1] = c->second;
  n.outputs = {out};
  n.output_dtypes = {LOOM_DTYPE_FLOAT};
  return n;
}

}  // namespace

void split_skip_layer_norms(PartitionSpec& spec) {
  // The bias is added to the operand a MatMul / Gemm / Conv of this
  // partition produces, so that both adds become that primitive's post-ops.
  std::set<std::string> anchored;
  for (const NodeSpec& n : spec.nodes)
    if (n.op_type == "MatMul" || n.op_type == "Gemm" || n.op_type == "Conv")
      anchored.insert(n.outputs.begin(), n.outputs.end());
  std::vector<NodeSpec> nodes;
  nodes.reserve(spec.nodes.size());
  for (NodeSpec& n : spec.nodes) {
    if (n.op_type != "SkipLayerNormalization" || n.domain != "com.microsoft" || !full_shape_skip(n) ||
        n.input_shapes.size() < 3) {
      nodes.push_back(std::move(n));
      continue;
    }
    const bool sum_wanted = n.outputs.size() > 3 && !n.outputs[3].empty();
    const std::string sum = sum_wanted ? n.outputs[3] : n.outputs[0] + "/skip_sum";
    const size_t biased = anchored.count(n.inputs[1]) && !anchored.count(n.inputs[0]) ? 1 : 0;
    std::string first = n.inputs[biased];
    if (n.has_input(4)) {
      first = n.outputs[0] + "/skip_bias";
      nodes.push_back(add_node(n, n.inputs[biased], biased, n.inputs[4], 4, first, "bias"));
    }
    NodeSpec residual = add_node(n, first, biased, n.inputs[1 - biased], 1 - biased, sum, "residual");
    residual.input_is_constant[0] = false;
    nodes.push_back(std::move(residual));
    NodeSpec ln;
    ln.op_type = "LayerNormalization";
    ln.opset = 17;
    ln.name = n.name;
    ln.inputs = {sum, n.inputs[2], n.has_input(3) ? n.inputs[3] : ""};
    ln.input_dtypes.assign(3, LOOM_DTYPE_FLOAT);
    ln.input_shapes = {n.input_shapes[0], n.input_shapes[2], n.input_shapes.size() > 3 ? n.input_shapes[3] : std::nullopt};
    ln.input_is_constant = {false, n.input_is_constant[2], n.input_is_constant.size() > 3 && n.input_is_constant[3]};
    for (size_t i = 2; i <= 3; ++i)
      if (auto c = n.constant_shapes.find(i); c != n.constant_shapes.end()) ln.constant_shapes[i - 1] = c->second;
    ln.ints["axis"] = -1;
    ln.floats["epsilon"] = n.attr_float("epsilon", 1e-12f);
    ln.outputs = {n.outputs[0]};
    ln.output_dtypes = {LOOM_DTYPE_FLOAT};
    nodes.push_back(std::move(ln));
  }
  spec.nodes = std::move(nodes);
}

}  // namespace loom::onednn
