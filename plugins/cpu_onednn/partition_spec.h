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
};

}  // namespace loom::onednn
