// What a graph transformation pass is, and the context it runs in (the
// transform framework; the passes themselves are in transform/passes/).
// Passes are grouped in levels (see loom::OptimizationLevel); a session runs
// every pass of each enabled level, in order, until a round changes nothing
// (framework/pass_manager.h, in the order of passes/pipeline.h).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "loom/config.h"

namespace loom::transform {

// Evaluates one node on host tensors through a loaded CPU plugin (the core
// has no kernels). Returns the node's outputs in order (empty Tensor for
// unnamed outputs).
using NodeEvaluator = std::function<Expected<std::vector<Tensor>>(const ir::Graph& graph, const ir::Node& node)>;

struct PassContext {
  NodeEvaluator evaluate;  // may be empty: passes that need it then do nothing
  std::string model_name;
  // Asked by extended-level fusions before they replace the nodes
  // `replaced` by `fused` (`staged`: types of values the same rewrite adds;
  // `staged_initializers`: constants it adds, such as a transposed weight):
  // false keeps the nodes (the EP that would run them does not run the
  // fused op). Unset: every fusion is allowed.
  std::function<bool(const ir::Graph&, const std::vector<ir::NodeId>& replaced, const ir::Node& fused,
                     const std::map<std::string, ir::ValueType>& staged,
                     const std::map<std::string, Tensor>& staged_initializers)>
      accept_fusion;
  // Bumped by the pass manager after every pass run that changed the graph
  // (passes that cache work per graph state compare it).
  uint64_t graph_version = 0;
};

class Pass {
 public:
  virtual ~Pass() = default;
  virtual std::string name() const = 0;
  virtual OptimizationLevel level() const = 0;
  // Sets *changed when the graph was modified. An error leaves the graph valid.
  virtual Status run(ir::Graph& graph, PassContext& ctx, bool* changed) = 0;
};

}  // namespace loom::transform
