// The host's calls into a plugin's kernels and compiled partitions, each
// filling its Args struct and turning the plugin's status into a Status, so
// the planner and the executor never touch a raw slot (EpInstance does the
// same for the EP table's slots).
#pragma once

#include "loom/plugin_api.h"
#include "loom/status.h"

namespace loom::plugin_host {

// `def`'s kernel object for `node` (released through def.release).
Expected<void*> create_kernel(const LOOM_KernelDef& def, const LOOM_NodeView* node);

// Runs a kernel / a compiled partition (with a run state of its own when it
// makes them) on `ctx`. The plugin's status as it returned it.
Status run_kernel(const LOOM_KernelDef& def, void* kernel, LOOM_KernelContext* ctx);
Status run_partition(const LOOM_CompiledPartition& partition, LOOM_KernelContext* ctx);

}  // namespace loom::plugin_host
