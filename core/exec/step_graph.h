// Which steps of a plan must finish before which, for executors that run
// steps out of plan order (the parallel executor). Derived from the plan:
//  - a step runs after the producers of every value it reads (inputs and
//    subgraph captures);
//  - the waits the plan put right before a step run before it, a wait runs
//    after the record of its event, a record right after the step it marks;
//  - steps on one asynchronous stream launch in plan order (the stream runs
//    work in launch order, and events mark points in that order);
//  - the barrier runs last.
// Memory is not a dependency: parallel runs do not use planned offsets.
#pragma once

#include <cstddef>
#include <vector>

namespace loom::exec {

class ExecutionPlan;

struct StepGraph {
  std::vector<int> dependency_count;             // per step: steps it waits for
  std::vector<std::vector<size_t>> successors;   // per step: steps waiting for it
  std::vector<size_t> roots;                     // steps with no dependency
};

StepGraph build_step_graph(const ExecutionPlan& plan);

}  // namespace loom::exec
