// A fused partition's nodes, ready to run on the fallback provider (the
// reference EP) when the partition's own EP declines the inputs of a run:
// its compute returns NOT_IMPLEMENTED before making any output (cpu_onednn
// and zero-sized tensors, say). ONNX Runtime runs such inputs; a model must
// not fail because the fast EP meets a shape it does not handle.
//
// The nodes are copied at plan time (cheap: no tensors; the partition's
// constants are fed as inputs, like its other inputs); the plan of them is
// built the first time it is needed, once, and kept.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "exec/subgraph_plan.h"
#include "ir/graph.h"

namespace loom::exec {

// Plans a graph on the fallback provider alone (the session's).
using FallbackPlanner = std::function<Expected<std::shared_ptr<const SubgraphPlan>>(const ir::Graph&)>;

class PartitionFallback {
 public:
  // `graph`: the partition's nodes, its inputs (in the step's input order)
  // and outputs (in the step's output order).
  PartitionFallback(std::shared_ptr<const ir::Graph> graph, FallbackPlanner planner)
      : graph_(std::move(graph)), planner_(std::move(planner)) {}

  // The plan, built on first use; a failure is kept and returned again.
  Expected<std::shared_ptr<const SubgraphPlan>> plan() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (plan_ == nullptr && why_.is_ok()) {
      auto p = planner_(*graph_);
      if (p) plan_ = *p;
      else why_ = p.status();
    }
    if (plan_ == nullptr) return why_;
    return plan_;
  }
  const ir::Graph& graph() const { return *graph_; }

 private:
  std::shared_ptr<const ir::Graph> graph_;
  FallbackPlanner planner_;
  std::mutex mutex_;
  std::shared_ptr<const SubgraphPlan> plan_;
  Status why_;
};

// The partition of `nodes` (topological order) of `graph`, reading `inputs`
// and making `outputs` in the step's order, ready for the fallback: a graph
// of its own whose inputs are the partition's (constants included). NULL
// for nodes with subgraphs (planned with the session's providers, not
// copied here).
std::shared_ptr<PartitionFallback> make_partition_fallback(const ir::Graph& graph,
                                                           const std::vector<const ir::Node*>& nodes,
                                                           const std::vector<std::string>& inputs,
                                                           const std::vector<std::string>& outputs,
                                                           FallbackPlanner planner);

}  // namespace loom::exec
