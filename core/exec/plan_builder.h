// Builds the ExecutionPlan from a partitioned graph: orders the partitions,
// creates kernels and compiles fused sets, inserts copies where a value
// crosses memory kinds, computes slot lifetimes and plans memory.
#pragma once

#include <memory>
#include <vector>

#include "exec/execution_plan.h"
#include "partition/partitioner.h"

namespace loom::exec {

Expected<std::unique_ptr<ExecutionPlan>> build_plan(const ir::Graph& graph, const partition::Assignment& assignment,
                                                    const std::vector<plugin_host::EpInstance*>& eps);

}  // namespace loom::exec
