#include "session/node_evaluator.h"

#include "memory/memory_arenas.h"
#include "exec/executor.h"
#include "exec/plan_builder.h"
#include "partition/partitioner.h"

namespace loom::session {

transform::NodeEvaluator make_node_evaluator(plugin_host::EpInstance& ep, int64_t max_tensor_bytes) {
  return [&ep, max_tensor_bytes](const ir::Graph& graph, const ir::Node& node) -> Expected<std::vector<Tensor>> {
    ir::Graph g;
    g.name = "folding of " + node.label();
    g.opsets = graph.opsets;
    g.op_schemas = graph.op_schemas;
    for (const std::string& in : node.inputs) {
      if (in.empty() || g.initializers.count(in)) continue;
      g.initializers[in] = graph.initializers.at(in);
      if (const ir::ValueType* t = graph.type_of(in)) g.value_types[in] = *t;
    }
    ir::Node copy = node;
    for (const std::string& out : node.outputs) {
      if (out.empty()) continue;
      g.outputs.push_back(out);
      if (const ir::ValueType* t = graph.type_of(out)) g.value_types[out] = *t;
    }
    g.add_node(std::move(copy));
    partition::PartitionInputs pin;
    pin.graph = &g;
    pin.eps = {&ep};
    pin.priority_count = 1;
    pin.policy = FallbackPolicy::kDeny;
    pin.model_name = g.name;
    LOOM_ASSIGN_OR_RETURN(partition::Assignment a, partition::partition(pin));
    LOOM_ASSIGN_OR_RETURN(std::unique_ptr<exec::ExecutionPlan> plan, exec::build_plan(g, a, pin.eps));
    memory::MemoryArenas arenas;
    exec::RunResourcePool pool(*plan, pin.eps, arenas, exec::ConstantStore::share(*plan, g));
    exec::ExecuteOptions options;
    options.limits.max_tensor_bytes = max_tensor_bytes;
    LOOM_ASSIGN_OR_RETURN(std::vector<exec::ValuePtr> produced,
                          exec::execute(*plan, pin.eps, {}, plan->outputs, pool, options));
    // Map back to the node's output positions (unnamed outputs stay empty).
    // Only tensors can become initializers.
    std::vector<Tensor> out;
    size_t k = 0;
    for (const std::string& o : node.outputs) {
      if (o.empty()) {
        out.emplace_back();
        continue;
      }
      LOOM_ASSIGN_OR_RETURN(Value v, plugin_host::to_public(*produced[k++]));
      if (!v.is_tensor()) return not_implemented("output '" + o + "' is not a tensor");
      out.push_back(v.tensor());
    }
    return out;
  };
}

}  // namespace loom::session
