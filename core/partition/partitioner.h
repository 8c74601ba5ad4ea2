// Splits a graph across EPs. EPs are asked in priority order; each claims
// single nodes (kernel table or get_capability) or sets of nodes to fuse and
// compile. Later claims that overlap earlier ones are dropped; a fused set
// that would create a cycle between partitions is refused. Nodes nobody
// claimed go to the fallback EP unless the policy is deny. Every decision is
// recorded with a reason for the placement report.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "loom/config.h"
#include "loom/session.h"
#include "plugin_host/ep_instance.h"

namespace loom::partition {

// A unit of execution: one node on a kernel EP, or a fused set to compile.
struct Group {
  size_t ep = 0;  // index into the EP list passed to partition()
  bool fused = false;
  std::vector<ir::NodeId> nodes;
  const LOOM_KernelDef* kernel = nullptr;  // kernel groups matched from a table
  std::string reason;
};

struct Assignment {
  std::vector<Group> groups;
  std::map<ir::NodeId, size_t> group_of;  // node -> index in groups
  PlacementReport report;
};

struct PartitionInputs {
  const ir::Graph* graph = nullptr;
  std::vector<plugin_host::EpInstance*> eps;  // priority order, then (maybe) the fallback
  size_t priority_count = 0;                  // eps[0, priority_count) are asked in order
  // Index into eps of the fallback EP, or -1 when none is available.
  int fallback = -1;
  FallbackPolicy policy = FallbackPolicy::kAllow;
  std::string model_name;  // for messages
};

Expected<Assignment> partition(const PartitionInputs& in);

}  // namespace loom::partition
