// The graph passes a session may run (see Config::optimization_level,
// disabled_passes and stop_after_pass), in the order the pass manager runs
// them within a round.
#pragma once

#include <string>
#include <vector>

#include "loom/config.h"

namespace loom {

struct GraphPassInfo {
  std::string name;
  // The lowest optimization level that runs it; kDisabled marks lowerings
  // that give ops their meaning and always run.
  OptimizationLevel level = OptimizationLevel::kBasic;
};

std::vector<GraphPassInfo> graph_passes();

}  // namespace loom
