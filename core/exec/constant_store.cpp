#include "exec/constant_store.h"

#include "plugin_host/abi_objects.h"

namespace loom::exec {
namespace {

// Calls visit(slot, initializer) for each constant slot of `plan` that an
// initializer of `graph` fills.
template <class Graph, class Visit>
void for_each_constant(const ExecutionPlan& plan, Graph& graph, Visit visit) {
  for (size_t s = 0; s < plan.slots.size(); ++s) {
    if (plan.slots[s].kind != SlotKind::kConstant) continue;
    auto it = graph.initializers.find(plan.slots[s].name);
    if (it != graph.initializers.end()) visit(s, it->second);
  }
}

}  // namespace

std::unique_ptr<ConstantStore> ConstantStore::take(const ExecutionPlan& plan, ir::Graph& graph,
                                                   const std::map<std::string, TypeOnly>& packed) {
  std::unique_ptr<ConstantStore> store(new ConstantStore(plan.slots.size()));
  for_each_constant(plan, graph, [&](size_t s, Tensor& t) {
    auto p = packed.find(plan.slots[s].name);
    if (p != packed.end()) store->released_.emplace(static_cast<SlotId>(s), p->second);
    else store->tensors_[s] = std::move(t);
  });
  return store;
}

std::unique_ptr<ConstantStore> ConstantStore::share(const ExecutionPlan& plan, const ir::Graph& graph) {
  std::unique_ptr<ConstantStore> store(new ConstantStore(plan.slots.size()));
  for_each_constant(plan, graph, [&](size_t s, const Tensor& t) { store->tensors_[s] = t; });
  return store;
}

std::shared_ptr<const LOOM_Value> ConstantStore::value(SlotId slot, const LOOM_MemoryInfo* host) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto s = static_cast<size_t>(slot);
  if (values_[s] == nullptr) {
    auto released = released_.find(slot);
    values_[s] = released == released_.end()
                     ? plugin_host::tensor_value(tensors_[s])
                     : plugin_host::tensor_view_value(released->second.first, released->second.second, nullptr, host);
  }
  return values_[s];
}

bool ConstantStore::release(SlotId slot) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto s = static_cast<size_t>(slot);
  if (released_.count(slot) || tensors_[s].data() == nullptr) return false;
  released_[slot] = {tensors_[s].dtype(), tensors_[s].dims()};
  tensors_[s] = Tensor();  // the bytes go once runs that bound them let go
  values_[s].reset();
  return true;
}

void ConstantStore::mark_released(SlotId slot, DType dtype, Dims dims) {
  std::lock_guard<std::mutex> lock(mutex_);
  released_.emplace(slot, std::make_pair(dtype, std::move(dims)));
}

std::optional<std::pair<DType, Dims>> ConstantStore::released(SlotId slot) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = released_.find(slot);
  if (it == released_.end()) return std::nullopt;
  return it->second;
}

}  // namespace loom::exec
