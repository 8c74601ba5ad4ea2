// The prepared plan of a subgraph (an If branch, a Loop/Scan/SequenceMap
// body): partitioned and planned once at session creation like the main
// graph, run by control-flow kernels through kernel_run_subgraph.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "exec/executor.h"

namespace loom::exec {

struct SubgraphPlan {
  std::unique_ptr<ExecutionPlan> plan;
  std::unique_ptr<RunResourcePool> resources;
  std::vector<std::string> formal_inputs;  // the subgraph's inputs, in order
  std::vector<std::string> captures;       // outer-scope values it reads, bound by name

  ~SubgraphPlan() {
    resources.reset();  // before the plan it refers to
    plan.reset();
  }
};

}  // namespace loom::exec
