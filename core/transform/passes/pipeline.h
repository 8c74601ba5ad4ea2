// The passes sessions run, in order (transform/passes/), through the
// framework's pass manager (framework/pass_manager.h): the optimization
// passes of every level up to the configured one, then the layout phase.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "transform/framework/pass_manager.h"

namespace loom::transform {

// The names of every pass and its level, in the order they run.
std::vector<std::pair<std::string, OptimizationLevel>> pass_names();

// Fails on an unknown disabled pass name (listing the known ones) or a
// failing pass (naming it); `runs` (optional) receives the runs made.
// `numbered` (optional) receives how many numbered pass runs were made.
Status optimize(ir::Graph& graph, const OptimizeOptions& options, PassContext& ctx,
                std::vector<PassRun>* runs = nullptr, int* numbered = nullptr);

// The layout phase, after optimize and the precision conversion: the
// channels-last rewrite (passes/channels_last.h) and the clean-up of the
// Transposes it adds, to a fixed point. Runs at level extended and above
// unless `channels_last` is disabled; pass runs are numbered on from
// `numbered_before` (optimize's count), so stop_after_pass counts both.
Status optimize_layout(ir::Graph& graph, const OptimizeOptions& options, PassContext& ctx,
                       std::vector<PassRun>* runs = nullptr, int numbered_before = 0);

}  // namespace loom::transform
