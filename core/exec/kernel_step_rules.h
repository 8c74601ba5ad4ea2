// How a kernel step's outputs are typed and placed, read once per node at
// plan time: the element types the op's schema fixes, and the inputs and
// outputs a kernel reads or writes on the host.
#pragma once

#include <vector>

#include "exec/execution_plan.h"
#include "ir/graph.h"
#include "loom/plugin_api.h"

namespace loom::exec {

// Per input (or output) of `def`, whether its kernel reads (writes) it on the
// host (LOOM_KernelDef.host_inputs / host_outputs); empty when none is.
std::vector<bool> on_host(const LOOM_KernelDef* def, bool outputs, size_t count);

// Output element types as the op's ONNX schema determines them.
std::vector<Step::OutputTypeRule> output_type_rules(const ir::Graph& g, const ir::Node& n);

}  // namespace loom::exec
