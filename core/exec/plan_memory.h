// The last pass of build_plan, once its steps, copies and stream
// synchronisation are in place: each intermediate's lifetime and the
// static memory plan.
//   - Lifetime: from the step that makes a slot to its last reader, raised
//     by `extra_reads` ((step, slot) pairs: a subgraph's captures) and by
//     reads an asynchronous stream must finish first (extend_async_reads);
//     that step frees it (Step::frees, Slot::produced_at / dies_at).
//   - Readers: Slot::readers counts the steps reading each slot.
//   - Bytes: an intermediate whose static type is fully known is sized
//     (up to 1 TiB planned in all; past it, and for once-per-session
//     constant copies, the run allocates by the real tensor).
//   - In place: where a kernel's LOOM_KernelDef.inplace_pairs allows, an
//     output takes over the buffer of an input that dies at that step
//     (same memory, same bytes).
//   - Offsets: memory::plan_memory packs each memory kind's buffers into
//     one arena (Slot::planned_offset / planned_bytes,
//     MemoryKind::arena_bytes).
#pragma once

#include <utility>
#include <vector>

#include "exec/execution_plan.h"

namespace loom::exec {

void plan_lifetimes_and_memory(ExecutionPlan& plan, const std::vector<std::pair<size_t, SlotId>>& extra_reads);

}  // namespace loom::exec
