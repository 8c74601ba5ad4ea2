// Matching a node against an EP's kernel table: domain, op type, opset range
// and type constraints (bound to the node's inputs/outputs through the ONNX
// schema of the op).
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "plugin_host/ep_instance.h"

namespace loom::partition {

// The best kernel (highest since_version) serving `node`, or NULL with
// *why_not saying what was missing (for the placement report).
const LOOM_KernelDef* find_kernel(const plugin_host::EpInstance& ep, const ir::Graph& graph, const ir::Node& node,
                                  std::string* why_not);
// The same among `kernels` only.
const LOOM_KernelDef* find_kernel_among(const std::vector<const LOOM_KernelDef*>& kernels, const ir::Graph& graph,
                                        const ir::Node& node, std::string* why_not);

}  // namespace loom::partition
