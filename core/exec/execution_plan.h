// The immutable execution plan of a session: value slots, the streams work
// runs on, the ordered steps (kernel launches, compiled-partition launches,
// copies between memory kinds, event records and waits, the final barrier),
// when each slot dies, and the memory plan. Built once by plan_builder; read
// concurrently by every run.
//
// Streams: stream 0 is the host, where synchronous EPs run (a step there is
// complete when it returns); each asynchronous EP gets one stream, where its
// steps are launched in plan order and complete later, in order. A value
// crossing from an asynchronous stream to another stream is ordered by an
// event recorded after its producer and waited on before its first consumer
// there (by the host: blocking; by another stream: without blocking the
// host). A barrier at the end waits for every stream before outputs are read.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "exec/step_graph.h"
#include "ir/graph.h"
#include "loom/plugin_api.h"
#include "plugin_host/ep_instance.h"

namespace loom::exec {

using SlotId = int32_t;
constexpr SlotId kNoSlot = -1;

enum class SlotKind { kGraphInput, kConstant, kIntermediate, kGraphOutput };

struct Slot {
  std::string name;  // value name; copies are "<name>@<memory>"
  SlotKind kind = SlotKind::kIntermediate;
  size_t memory = 0;                // index into ExecutionPlan::memories
  ir::ValueType type;               // static type, possibly partial
  int64_t planned_offset = -1;      // offset in the run's arena of `memory`, -1 if not planned
  int64_t planned_bytes = 0;
  int readers = 0;                  // steps reading the slot (inputs and subgraph captures)
  int produced_at = -1;             // kIntermediate: the step that makes it
  int dies_at = -1;                 // kIntermediate: the step after which it is dropped
};

enum class StepKind { kKernel, kPartition, kCopy, kRecord, kWait, kBarrier };

constexpr size_t kHostStream = 0;

struct StreamInfo {
  int ep = -1;       // index of the asynchronous EP that makes it; -1 for the host
  std::string name;  // "host" or the provider name
};

struct SubgraphPlan;       // exec/subgraph_plan.h
class PartitionFallback;  // exec/partition_fallback.h

struct Step {
  StepKind kind = StepKind::kKernel;
  size_t ep = 0;  // the EP that runs it (for copies: whose data transfer copies)
  size_t stream = kHostStream;  // where it runs (kWait: the stream that waits)
  size_t memory = 0;            // kKernel / kPartition: where the EP's values live (its scratch comes from there)
  int event = -1;               // kRecord / kWait: index into ExecutionPlan::events
  // kCopy of an initializer into device memory: done once per session (the
  // first run copies synchronously into a buffer the session keeps; later
  // runs read that buffer), as weights belong on the device.
  bool constant_copy = false;
  const LOOM_KernelDef* def = nullptr;         // kKernel
  void* kernel = nullptr;                      // kKernel: per-node kernel object
  const LOOM_NodeView* node_view = nullptr;    // kKernel
  LOOM_CompiledPartition* partition = nullptr; // kPartition
  std::vector<SlotId> inputs;   // kNoSlot for omitted optional inputs
  std::vector<SlotId> outputs;  // kNoSlot for unnamed outputs
  // Per input, the memory kind the step reads it in (binding sets it; the
  // copies pass, exec/plan_copies.h, then makes each input a slot there).
  std::vector<size_t> input_memory;
  // kKernel: per input / output, whether the kernel reads / writes it on the
  // host during compute (LOOM_KernelDef.host_inputs / host_outputs); such
  // slots live in host memory. Empty when none is.
  std::vector<bool> input_on_host, output_on_host;
  std::vector<SlotId> frees;    // intermediate slots whose last reader is this step
  std::string label;            // "node 'conv1' (Conv) on 'reference'", for messages
  std::string name;             // for profiles: the node's name (first node of a partition), else the label
  std::string op_type;          // for profiles: "Conv", "fused(Conv+Relu)", or the kind ("copy", "wait"...)
  // Control flow: the prepared plan of each graph attribute, and the slots of
  // the outer-scope values its bodies capture (by name).
  std::map<std::string, std::shared_ptr<const SubgraphPlan>> subgraphs;
  // kPartition on a host-memory EP: its nodes on the fallback provider, for
  // inputs the EP declines at run time (exec/partition_fallback.h).
  std::shared_ptr<PartitionFallback> fallback;
  std::map<std::string, SlotId> captures;
  // Element type of each output when neither the kernel nor static inference
  // names it, from the op's schema: a fixed type (`dtype`), or the runtime
  // type of input `same_as_input`. Both unset when the schema cannot tell.
  struct OutputTypeRule {
    int32_t dtype = LOOM_DTYPE_UNDEFINED;
    int same_as_input = -1;
  };
  std::vector<OutputTypeRule> output_types;

  // The slots the step reads (inputs and subgraph captures), each once.
  std::vector<SlotId> reads() const;
  // Whether the step reads `slot` on the host when it is launched (a copy's
  // host source, a kernel's host input) rather than on its stream.
  bool reads_at_launch(SlotId slot, size_t slot_memory) const;
  // Whether output `slot` is complete when the launch returns (a kernel's
  // host output) rather than when the stream reaches the step.
  bool writes_at_launch(SlotId slot) const;
};

struct MemoryKind {
  LOOM_MemoryInfo info{};
  const LOOM_Allocator* allocator = nullptr;  // NULL for host memory
  int64_t arena_bytes = 0;                   // planned peak for this memory
};

class ExecutionPlan {
 public:
  ExecutionPlan() = default;
  ExecutionPlan(const ExecutionPlan&) = delete;
  ExecutionPlan& operator=(const ExecutionPlan&) = delete;
  // Releases kernels and compiled partitions through their own slots.
  ~ExecutionPlan();

  std::vector<Slot> slots;
  std::vector<Step> steps;
  std::vector<MemoryKind> memories;  // [0] is host memory
  std::vector<StreamInfo> streams;   // [0] is the host
  std::vector<size_t> events;        // per event: the stream it is recorded on
  StepGraph step_graph;              // dependencies, for parallel runs
  std::vector<std::pair<std::string, SlotId>> inputs;  // graph inputs (incl. overridable initializers)
  std::vector<SlotId> outputs;                          // graph outputs, in order
  std::vector<std::string> output_names;
  // The EP contract on shapes: a step's output must have the rank and the
  // fixed dims of its slot's static type (RunState::check_static_shape).
  bool check_shapes = false;
  // Views the kernels' node views point into; owned here so they outlive runs.
  std::unique_ptr<LOOM_GraphView> graph_view;
  // Kernel objects to release (also on a plan abandoned half-built).
  std::vector<std::pair<const LOOM_KernelDef*, void*>> created_kernels;

  int64_t planned_peak_bytes() const;
  std::string to_string() const;
};

}  // namespace loom::exec
