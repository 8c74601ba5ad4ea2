// Synchronisation between a plan's streams: the events, waits and barrier
// that order values crossing from an asynchronous stream, and how long a
// buffer read on such a stream must stay reserved. Used by the plan builder
// once every step is in place.
#pragma once

#include <utility>
#include <vector>

#include "exec/execution_plan.h"

namespace loom::exec {

// Orders values that leave an asynchronous stream: an event is recorded
// after the producer, and the first consumer on each other stream waits on
// it. A stream that already waited for the same or a later point of the
// producer's stream waits no more (streams run in order), and values made
// on the host need no event (host steps, and host outputs of any step,
// are complete when the launch returns). A value a step reads on the host
// at launch (a copy's host source, a kernel's host input) is waited for
// by the host, even when its producer ran on the step's own stream.
// A barrier ends the plan when any stream is asynchronous. The steps of
// `step_reads` ((step index, slot) pairs) are renumbered to match.
void insert_stream_synchronization(ExecutionPlan& plan, std::vector<std::pair<size_t, SlotId>>& step_reads);

// A buffer in memory that several streams touch, read on an asynchronous
// stream, stays reserved until the host knows the read is done (a host
// wait for a later point of that stream, or the barrier): otherwise a step
// elsewhere could reuse bytes the stream has yet to read. Copies read host
// sources when launched (LOOM_DataTransfer_Copy_Args) and kernels read
// their host inputs during compute, so those reads are exempt. `last_use`
// holds each slot's last reading step and is raised where needed.
void extend_async_reads(const ExecutionPlan& plan, std::vector<int>& last_use);

}  // namespace loom::exec
