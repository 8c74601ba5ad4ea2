// Builds the ExecutionPlan from a partitioned graph: orders the partitions,
// creates kernels and compiles fused sets, inserts copies where a value
// crosses memory kinds, computes slot lifetimes and plans memory.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "exec/execution_plan.h"
#include "exec/partition_fallback.h"
#include "partition/partitioner.h"

namespace loom::profile {
class Profiler;
}

namespace loom::exec {

struct SubgraphPlan;

// Prepares the plan of a subgraph (partition + build_plan); provided by the
// session so subgraphs are placed with the same EPs and policy.
using SubgraphPlanner = std::function<Expected<std::shared_ptr<const SubgraphPlan>>(const ir::Graph& subgraph)>;

struct PlanOptions {
  // Names bound like graph inputs in addition to graph.inputs (a subgraph's
  // outer-scope captures).
  std::vector<std::string> extra_inputs;
  // Required when a node has graph attributes; otherwise such a node fails.
  SubgraphPlanner plan_subgraph;
  // Profiling sessions: compile spans go here (may be NULL).
  profile::Profiler* profiler = nullptr;
  // Check every value a step makes against the graph's static shapes
  // (ExecutionPlan::check_shapes). Off for subgraph bodies: a Loop's carried
  // values may change shape from one iteration to the next while the body's
  // types keep the first iteration's.
  bool check_shapes = false;
  // Plans a fused partition's nodes on the fallback provider when its EP
  // declines a run's inputs (exec/partition_fallback.h); empty: no fallback.
  FallbackPlanner plan_fallback;
  // Called while a host-memory EP compiles a partition, for an initializer
  // of the graph that the EP packed into its own copy (LOOM_HostApi::
  // graph_release_constant_input) and that no other step reads (nor a run
  // overrides, nor the graph outputs): the caller may free its bytes now
  // (the plan's constant slot then binds its dtype and dims only). Called
  // once per initializer at most. Empty: every initializer is kept.
  std::function<void(const std::string& initializer)> release_initializer;
};

Expected<std::unique_ptr<ExecutionPlan>> build_plan(const ir::Graph& graph, const partition::Assignment& assignment,
                                                    const std::vector<plugin_host::EpInstance*>& eps,
                                                    const PlanOptions& options = {});

}  // namespace loom::exec
