#include "build_inputs.h"

namespace loom::onednn {

BuildInputs build_inputs_of(const sdk::KernelContext& ctx, size_t count) {
  BuildInputs inputs(count);
  for (size_t i = 0; i < count; ++i) {
    const sdk::ConstTensor t = ctx.input(i);
    if (!t.exists()) continue;
    inputs[i] = {true, t.dtype(), t.shape(), t};
  }
  return inputs;
}

std::optional<BuildInputs> build_inputs_at_compile(const PartitionSpec& spec, const sdk::Graph& graph) {
  BuildInputs inputs(spec.inputs.size());
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    const std::string& name = spec.inputs[i];
    if (!spec.input_is_constant[i] && spec.parameter_only(name)) return std::nullopt;
    BuildInput& in = inputs[i];
    if (spec.input_is_constant[i]) {
      for (size_t n = 0; n < graph.node_count() && !in.exists; ++n) {
        const sdk::Node node = graph.node(n);
        for (size_t k = 0; k < node.input_count(); ++k) {
          if (node.input_name(k) != name) continue;
          const sdk::ConstTensor t = node.input_constant(k);
          if (t.exists()) in = {true, t.dtype(), t.shape(), t};
          break;
        }
      }
      if (!in.exists) return std::nullopt;
      continue;
    }
    // The type inference gave the nodes that read it (the spec's snapshot).
    for (const NodeSpec& node : spec.nodes) {
      for (size_t k = 0; k < node.inputs.size() && !in.exists; ++k) {
        if (node.inputs[k] != name || !node.input_shapes[k]) continue;
        in = {true, node.input_dtypes[k], *node.input_shapes[k], {}};
      }
      if (in.exists) break;
    }
    if (!in.exists) return std::nullopt;
    for (int64_t d : in.dims)
      if (d < 0) return std::nullopt;
  }
  return inputs;
}

}  // namespace loom::onednn
