// The transform framework's pass manager: runs a list of passes to a fixed
// point. Each pass run is numbered (1, 2, ...) and logged with its time and
// effect; `stop_after_pass` ends the optimization after run N to bisect a
// bad rewrite. Lowerings (level kDisabled) always run and are not counted.
// Which passes run, in which order: passes/pipeline.h.
#pragma once

#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "transform/framework/pass.h"

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

// Rounds of `passes` until one changes nothing (at most 8; each pass
// strictly shrinks or simplifies the graph, so more only means a bug):
// passes above `options.level` or in `options.disabled` are skipped, and
// lowerings (level kDisabled) always run. Optimization pass runs are
// numbered on from *number (updated), and none runs past
// `options.stop_after_pass`; `runs` (optional) receives every run. Fails
// on a failing pass, naming it.
Status run_to_fixed_point(std::vector<std::unique_ptr<Pass>>& passes, ir::Graph& graph, const OptimizeOptions& options,
                          PassContext& ctx, std::vector<PassRun>* runs, int* number);

}  // namespace loom::transform
