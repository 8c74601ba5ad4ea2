// What compile() keeps of a claimed subgraph: its nodes (topological order)
// and its inputs and outputs, in the order the kernel context presents them.
#pragma once

#include <string>
#include <vector>

#include "node_spec.h"

namespace loom::onednn {

struct PartitionSpec {
  std::vector<NodeSpec> nodes;
  std::vector<std::string> inputs;
  std::vector<bool> input_is_constant;  // parallel to inputs: initializers, packed once per program
  std::vector<std::string> outputs;

  static PartitionSpec from(const sdk::Graph& graph);
  // Whether input `name` is read only as a parameter (a Resize / Upsample's
  // roi, scales or sizes, whose values shape the program), never as a
  // tensor of a step. Such an input may be empty: an omitted roi / scales
  // is often a 0-element initializer.
  bool parameter_only(const std::string& name) const;
};

}  // namespace loom::onednn
