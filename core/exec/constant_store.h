// The host constants (initializers) of one plan as its runs bind them,
// owned apart from the plan and from the IR so that runs write into
// neither: the plan says which slots are constants; this store holds their
// bytes, the value each run binds, and which ones their only reader has
// packed and released (LOOM_HostApi::kernel_release_constant_input, as
// ONNX Runtime frees prepacked weights). One per plan, in its
// RunResourcePool; thread-safe.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "exec/execution_plan.h"
#include "ir/graph.h"

namespace loom::exec {

class ConstantStore {
 public:
  // The initializers `plan` binds (its constant slots, by name), taken out
  // of `graph`: the session's graph hands them over once its plan is
  // built and keeps their types (ir::Graph::value_types) only. `packed`:
  // those whose bytes were freed while the plan was built, as their
  // partition packed them (PlanOptions::release_initializer), with their
  // dtype and dims: runs bind these without data.
  using TypeOnly = std::pair<DType, Dims>;
  static std::unique_ptr<ConstantStore> take(const ExecutionPlan& plan, ir::Graph& graph,
                                             const std::map<std::string, TypeOnly>& packed = {});
  // The same, shared with `graph` (a subgraph body, which its enclosing
  // graph keeps): released bytes then stay as long as the graph does.
  static std::unique_ptr<ConstantStore> share(const ExecutionPlan& plan, const ir::Graph& graph);

  // The value runs bind for constant slot `slot`: a view of its bytes,
  // made once and shared by every run (rebuilding ~100 of them per run cost
  // MobileNetV2 60-70 us of a 7.5 ms run); dtype and dims without data once
  // released. A run keeps the value it bound alive until it ends.
  std::shared_ptr<const LOOM_Value> value(SlotId slot, const LOOM_MemoryInfo* host);
  // Lets go of the host bytes of constant slot `slot`; true the first time
  // (false for a slot with no bytes here). Later binds get dtype and dims.
  bool release(SlotId slot);
  // Records that `slot` (a device copy of a constant) was released by its
  // reader: later runs bind its dtype and dims only.
  void mark_released(SlotId slot, DType dtype, Dims dims);
  std::optional<std::pair<DType, Dims>> released(SlotId slot) const;

 private:
  explicit ConstantStore(size_t slots) : tensors_(slots), values_(slots) {}

  mutable std::mutex mutex_;
  std::vector<Tensor> tensors_;  // by slot; empty but for constants not released
  std::vector<std::shared_ptr<const LOOM_Value>> values_;
  std::map<SlotId, std::pair<DType, Dims>> released_;
};

}  // namespace loom::exec
