// Which nodes the CUDA EP claims, and why it leaves the others (shown by
// `loom partition`). A node is claimed when a kernel serves it
// (KernelTable::why_not) and it is not shape arithmetic: integer nodes
// whose every result is read only as a shape operand on the host (a
// Reshape's shape, a Slice's starts; LOOM_KernelDef.host_inputs) or by
// other such nodes stay with a host provider, as in ONNX
// Runtime, so shapes never make a round trip through the device.
#pragma once

#include <string>
#include <vector>

#include "kernel_table.h"

namespace loom::cuda {

struct NodePlacement {
  bool claim = false;
  std::string reason;  // why it is claimed, or why not
};

// One entry per node of `graph`, in its order.
std::vector<NodePlacement> place_nodes(const KernelTable& table, const sdk::Graph& graph);

}  // namespace loom::cuda
