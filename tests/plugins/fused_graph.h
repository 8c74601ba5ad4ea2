// A fused subgraph handed to a test EP's compile, copied into plain data
// (graph inputs, outputs, and nodes in order) so the compiled partition can
// interpret it after the view is gone.
#pragma once

#include <loom/sdk.h>

#include <string>
#include <vector>

namespace loom::testing {

struct FusedGraph {
  struct Op {
    std::string type;
    std::vector<std::string> in, out;
  };
  std::vector<std::string> inputs, outputs;
  std::vector<Op> ops;

  explicit FusedGraph(const loom::sdk::Graph& g) {
    for (size_t i = 0; i < g.input_count(); ++i) inputs.emplace_back(g.input_name(i));
    for (size_t i = 0; i < g.output_count(); ++i) outputs.emplace_back(g.output_name(i));
    for (size_t i = 0; i < g.node_count(); ++i) {
      loom::sdk::Node n = g.node(i);
      Op op{std::string(n.op_type()), {}, {}};
      for (size_t k = 0; k < n.input_count(); ++k) op.in.emplace_back(n.input_name(k));
      for (size_t k = 0; k < n.output_count(); ++k) op.out.emplace_back(n.output_name(k));
      ops.push_back(op);
    }
  }
};

}  // namespace loom::testing
