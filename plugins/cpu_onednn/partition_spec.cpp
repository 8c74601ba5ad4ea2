#include "partition_spec.h"

#include <map>

namespace loom::onednn {

PartitionSpec PartitionSpec::from(const sdk::Graph& g) {
  PartitionSpec p;
  for (size_t i = 0; i < g.node_count(); ++i) p.nodes.push_back(NodeSpec::from(g.node(i)));
  std::map<std::string, bool> constant;
  for (const NodeSpec& n : p.nodes)
    for (size_t k = 0; k < n.inputs.size(); ++k)
      if (n.has_input(k) && n.input_is_constant[k]) constant[n.inputs[k]] = true;
  for (size_t i = 0; i < g.input_count(); ++i) {
    p.inputs.emplace_back(g.input_name(i));
    p.input_is_constant.push_back(constant.count(p.inputs.back()) > 0);
  }
  for (size_t i = 0; i < g.output_count(); ++i) p.outputs.emplace_back(g.output_name(i));
  return p;
}

bool PartitionSpec::parameter_only(const std::string& name) const {
  for (const NodeSpec& n : nodes)
    for (size_t k = 0; k < n.inputs.size(); ++k)
      if (n.inputs[k] == name && !(k >= 1 && (n.op_type == "Resize" || n.op_type == "Upsample"))) return false;
  return true;
}

}  // namespace loom::onednn
