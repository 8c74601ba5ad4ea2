// Runs the passes of every level up to the configured one, to a fixed point:
// rounds of every enabled pass in order until a round changes nothing.
// Each pass run is numbered (1, 2, ...) and logged with its time and effect;
// `stop_after_pass` ends the optimization after run N to bisect a bad
// rewrite. Lowerings (level kDisabled) always run and are not counted.
#pragma once

#include <chrono>

#include <set>
#include <string>
#include <vector>

#include "transform/pass.h"

namespace loom::transform {

struct OptimizeOptions {
  OptimizationLevel level = OptimizationLevel::kBasic;
  std::set<std::string> disabled;  // pass names
  int stop_after_pass = -1;        // -1: no limit
};

// One run of one pass, in order.
struct PassRun {
  int number = 0;  // 1-based, optimization passes only (0 for lowerings)
  std::string pass;
  int round = 0;
  bool changed = false;
  double ms = 0;
  std::chrono::steady_clock::time_point start;  // for profiles
};

// The names of every pass and its level, in the order they run.
std::vector<std::pair<std::string, OptimizationLevel>> pass_names();

// Fails on an unknown disabled pass name (listing the known ones) or a
// failing pass (naming it); `runs` (optional) receives the runs made.
// `numbered` (optional) receives how many numbered pass runs were made.
Status optimize(ir::Graph& graph, const OptimizeOptions& options, PassContext& ctx,
                std::vector<PassRun>* runs = nullptr, int* numbered = nullptr);

// The layout phase, after optimize and the precision conversion: the
// channels-last rewrite (transform/channels_last.h) and the clean-up of the
// Transposes it adds, to a fixed point. Runs at level extended and above
// unless `channels_last` is disabled; pass runs are numbered on from
// `numbered_before` (optimize's count), so stop_after_pass counts both.
Status optimize_layout(ir::Graph& graph, const OptimizeOptions& options, PassContext& ctx,
                       std::vector<PassRun>* runs = nullptr, int numbered_before = 0);

}  // namespace loom::transform
