#include "exec/plan_builder.h"

#include <algorithm>
#include <map>
#include <queue>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "exec/kernel_step_rules.h"
#include "exec/plan_copies.h"
#include "exec/plan_memory.h"
#include "exec/plan_order.h"
#include "exec/plan_synchronization.h"
#include "exec/subgraph_plan.h"
#include "plugin_host/abi_objects.h"
#include "plugin_host/plugin_calls.h"
#include "profile/profiler.h"

namespace loom::exec {
namespace {

using plugin_host::EpInstance;

class PlanBuilder {
 public:
  PlanBuilder(const ir::Graph& g, const partition::Assignment& a, const std::vector<EpInstance*>& eps,
              const PlanOptions& options)
      : graph_(g), assignment_(a), eps_(eps), options_(options), plan_(std::make_unique<ExecutionPlan>()) {}

  Expected<std::unique_ptr<ExecutionPlan>> build() {
    plan_->graph_view = plugin_host::make_full_view(graph_);
    for (const auto& nv : plan_->graph_view->nodes) views_[nv->node->id] = nv.get();
    MemoryKind host;
    host.info = plugin_host::host_memory();
    plan_->memories.push_back(host);
    memory_owner_.push_back(-1);
    plan_->streams.push_back(StreamInfo{-1, "host"});
    stream_of_ep_.assign(eps_.size(), SIZE_MAX);

    LOOM_ASSIGN_OR_RETURN(order_, order_groups(graph_, assignment_));
    bind_graph_values();
    for (size_t g : order_.groups) LOOM_RETURN_IF_ERROR(add_group(assignment_.groups[g]));
    LOOM_RETURN_IF_ERROR(bind_outputs());
    LOOM_ASSIGN_OR_RETURN(auto capture_reads, copies());
    for (SlotId s : plan_->outputs)
      if (plan_->slots[s].kind == SlotKind::kIntermediate) plan_->slots[s].kind = SlotKind::kGraphOutput;
    insert_stream_synchronization(*plan_, capture_reads);
    plan_lifetimes_and_memory(*plan_, capture_reads);
    plan_->step_graph = build_step_graph(*plan_);
    return std::move(plan_);
  }

 private:
  size_t memory_index(const EpInstance& ep, size_t ep_index) {
    for (size_t i = 0; i < plan_->memories.size(); ++i)
      if (plugin_host::same_memory(plan_->memories[i].info, ep.memory())) return i;
    MemoryKind m;
    m.info = ep.memory();
    m.allocator = ep.allocator();
    plan_->memories.push_back(m);
    memory_owner_.push_back(static_cast<int>(ep_index));
    return plan_->memories.size() - 1;
  }

  // The stream EP `ep`'s steps run on: its own when it is asynchronous.
  size_t stream_of(size_t ep) {
    if (!eps_[ep]->is_async()) return kHostStream;
    if (stream_of_ep_[ep] == SIZE_MAX) {
      stream_of_ep_[ep] = plan_->streams.size();
      plan_->streams.push_back(StreamInfo{static_cast<int>(ep), eps_[ep]->name()});
    }
    return stream_of_ep_[ep];
  }

  SlotId new_slot(const std::string& name, SlotKind kind, size_t memory) {
    Slot s;
    s.name = name;
    s.kind = kind;
    s.memory = memory;
    if (const ir::ValueType* t = graph_.type_of(name)) s.type = *t;
    plan_->slots.push_back(std::move(s));
    return static_cast<SlotId>(plan_->slots.size() - 1);
  }

  void bind_graph_values() {
    for (const std::string& in : options_.extra_inputs) {
      SlotId s = new_slot(in, SlotKind::kGraphInput, 0);
      value_slot_[in] = s;
      plan_->inputs.emplace_back(in, s);
      input_slots_.insert(s);
    }
    for (const std::string& in : graph_.inputs) {
      auto init = graph_.initializers.find(in);
      SlotId s = new_slot(in, init != graph_.initializers.end() ? SlotKind::kConstant : SlotKind::kGraphInput, 0);
      value_slot_[in] = s;
      plan_->inputs.emplace_back(in, s);
      input_slots_.insert(s);
    }
    for (const auto& [name, t] : graph_.initializers) {
      if (value_slot_.count(name)) continue;
      SlotId s = new_slot(name, SlotKind::kConstant, 0);
      value_slot_[name] = s;
    }
  }

  // Binds `name` as the step's next input, read in memory `m` (the copies
  // pass brings it there).
  Status bind_input(Step& step, const std::string& name, size_t m) {
    auto it = value_slot_.find(name);
    if (it == value_slot_.end()) return invalid_graph(step.label + " reads value '" + name + "' which nothing produces");
    step.inputs.push_back(it->second);
    step.input_memory.push_back(m);
    return Status::ok();
  }

  Status add_group(const partition::Group& g) {
    EpInstance& ep = *eps_[g.ep];
    const size_t m = memory_index(ep, g.ep);
    Step step;
    step.ep = g.ep;
    step.stream = stream_of(g.ep);
    step.memory = m;
    std::vector<std::string> outputs;
    if (!g.fused) {
      const ir::Node& n = *graph_.find_node(g.nodes.front());
      step.kind = StepKind::kKernel;
      step.def = g.kernel;
      step.node_view = views_.at(n.id);
      step.label = "node " + n.label() + " on '" + ep.name() + "'";
      step.name = n.name.empty() ? n.label() : n.name;
      step.op_type = n.op_type;
      step.input_on_host = on_host(g.kernel, false, n.inputs.size());
      step.output_on_host = on_host(g.kernel, true, n.outputs.size());
      for (size_t i = 0; i < n.inputs.size(); ++i) {
        const std::string& in = n.inputs[i];
        if (in.empty()) {
          step.inputs.push_back(kNoSlot);
          step.input_memory.push_back(m);
          continue;
        }
        const bool host = i < step.input_on_host.size() && step.input_on_host[i];
        LOOM_RETURN_IF_ERROR(bind_input(step, in, host ? 0 : m));
      }
      LOOM_RETURN_IF_ERROR(plan_subgraphs(n, step));
      step.output_types = output_type_rules(graph_, n);
      outputs = n.outputs;
      auto kernel = plugin_host::create_kernel(*g.kernel, step.node_view);
      if (!kernel) return kernel.status().with_context(step.label + ": creating kernel");
      step.kernel = *kernel;
      plan_->created_kernels.push_back({g.kernel, *kernel});
    } else {
      LOOM_RETURN_IF_ERROR(compile_group(g, ep, m, step, outputs));
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      const std::string& o = outputs[i];
      if (o.empty()) {
        step.outputs.push_back(kNoSlot);
        continue;
      }
      const bool host = i < step.output_on_host.size() && step.output_on_host[i];
      SlotId s = new_slot(o, SlotKind::kIntermediate, host ? 0 : m);
      value_slot_[o] = s;
      step.outputs.push_back(s);
    }
    plan_->steps.push_back(std::move(step));
    return Status::ok();
  }

  // Prepares each graph attribute's plan and binds the outer-scope values the
  // bodies capture; those slots stay alive until this step (see lifetimes).
  Status plan_subgraphs(const ir::Node& n, Step& step) {
    for (const ir::Attribute& a : n.attributes) {
      if (!a.graphs.empty())
        return not_implemented(step.label + ": attribute '" + a.name + "' holds a list of graphs");
      if (!a.graph) continue;
      if (!options_.plan_subgraph) return not_implemented(step.label + ": subgraphs cannot be planned here");
      auto sub = options_.plan_subgraph(*a.graph);
      if (!sub) return sub.status().with_context(step.label + " subgraph '" + a.name + "'");
      for (const std::string& v : (*sub)->captures) {
        auto it = value_slot_.find(v);
        if (it == value_slot_.end())
          return invalid_graph(step.label + ": subgraph '" + a.name + "' reads '" + v + "', which is not defined");
        step.captures[v] = it->second;  // the copies pass brings it to the host
      }
      step.subgraphs[a.name] = *sub;
    }
    return Status::ok();
  }

  Status compile_group(const partition::Group& g, EpInstance& ep, size_t m, Step& step,
                       std::vector<std::string>& outputs) {
    // Work in the group's size and its outputs' readers, not the graph's: a
    // graph may hold as many fused groups as nodes.
    const std::set<ir::NodeId> members(g.nodes.begin(), g.nodes.end());
    std::vector<const ir::Node*> nodes;  // topological order
    for (ir::NodeId id : members) nodes.push_back(graph_.find_node(id));
    std::sort(nodes.begin(), nodes.end(),
              [&](const ir::Node* a, const ir::Node* b) { return order_.position.at(a->id) < order_.position.at(b->id); });
    std::unordered_set<std::string> produced;
    for (const ir::Node* n : nodes)
      for (const std::string& o : n->outputs)
        if (!o.empty()) produced.insert(o);
    std::vector<std::string> inputs;  // first-read order
    std::unordered_set<std::string> seen;
    for (const ir::Node* n : nodes)
      for (const std::string& v : ir::values_read(*n))
        if (!v.empty() && !produced.count(v) && seen.insert(v).second) inputs.push_back(v);
    // Outputs: produced inside and needed outside (other nodes or graph outputs).
    auto needed = [&](const std::string& o) {
      auto r = order_.readers.find(o);
      return order_.graph_outputs.count(o) > 0 ||
             (r != order_.readers.end() &&
              std::any_of(r->second.begin(), r->second.end(), [&](ir::NodeId id) { return !members.count(id); }));
    };
    for (const ir::Node* n : nodes)
      for (const std::string& o : n->outputs)
        if (!o.empty() && needed(o)) outputs.push_back(o);
    step.kind = StepKind::kPartition;
    step.label = "fused partition of " + std::to_string(nodes.size()) + " node(s) starting at " +
                 nodes.front()->label() + " on '" + ep.name() + "'";
    step.name = nodes.front()->name.empty() ? nodes.front()->label() : nodes.front()->name;
    std::vector<std::string> ops;
    for (const ir::Node* n : nodes)
      if (std::find(ops.begin(), ops.end(), n->op_type) == ops.end()) ops.push_back(n->op_type);
    step.op_type = "fused(";
    for (size_t i = 0; i < ops.size(); ++i) step.op_type += (i ? "+" : "") + ops[i];
    step.op_type += ")";
    for (const std::string& in : inputs) LOOM_RETURN_IF_ERROR(bind_input(step, in, m));
    if (options_.plan_fallback && ep.uses_host_memory())
      step.fallback = make_partition_fallback(graph_, nodes, inputs, outputs, options_.plan_fallback);
    auto view = plugin_host::make_graph_view(graph_, nodes, inputs, outputs);
    if (options_.release_initializer && ep.uses_host_memory())
      view->release_input = [this, &members, &inputs, v = view.get()](uint64_t index) {
        if (index < inputs.size()) release_packed_initializer(inputs[index], members, *v);
      };
    const auto start = profile::Clock::now();
    auto partition = ep.compile(view.get());
    if (options_.profiler != nullptr)
      options_.profiler->phase("compile", start, {{"partition", step.name + " " + step.op_type}, {"ep", ep.name()}});
    if (!partition) return partition.status().with_context(step.label);
    step.partition = *partition;
    return Status::ok();
  }

  // A compiling EP packed initializer `name` (read by the partition of
  // `members`): its bytes go where that partition alone needs them.
  void release_packed_initializer(const std::string& name, const std::set<ir::NodeId>& members,
                                  LOOM_GraphView& compile_view) {
    if (!graph_.initializers.count(name) || graph_.is_graph_input(name) || order_.graph_outputs.count(name) ||
        !released_initializers_.insert(name).second)
      return;
    for (const std::string& extra : options_.extra_inputs)
      if (extra == name) return;
    auto r = order_.readers.find(name);
    if (r == order_.readers.end() ||
        std::any_of(r->second.begin(), r->second.end(), [&](ir::NodeId id) { return !members.count(id); }))
      return;
    plugin_host::forget_constant_bytes(compile_view, name);
    plugin_host::forget_constant_bytes(*plan_->graph_view, name);
    options_.release_initializer(name);
  }

  // The graph outputs where they are made; the copies pass brings them to
  // the host.
  Status bind_outputs() {
    plan_->check_shapes = options_.check_shapes;
    for (const std::string& o : graph_.outputs) {
      auto it = value_slot_.find(o);
      if (it == value_slot_.end()) return invalid_graph("graph output '" + o + "' is never produced");
      plan_->outputs.push_back(it->second);
      plan_->output_names.push_back(o);
    }
    return Status::ok();
  }

  Expected<std::vector<std::pair<size_t, SlotId>>> copies() {
    CopyRules rules;
    rules.memory_owner = memory_owner_;
    rules.can_copy = [this](size_t ep, size_t from, size_t to) {
      return eps_[ep]->can_copy(plan_->memories[from].info, plan_->memories[to].info);
    };
    rules.stream_of = [this](size_t ep) { return stream_of(ep); };
    rules.ep_name = [this](size_t ep) { return eps_[ep]->name(); };
    rules.input_slots = input_slots_;
    return insert_copies(*plan_, rules);
  }

  const ir::Graph& graph_;
  const partition::Assignment& assignment_;
  const std::vector<EpInstance*>& eps_;
  const PlanOptions& options_;
  std::unique_ptr<ExecutionPlan> plan_;
  std::unordered_map<ir::NodeId, const LOOM_NodeView*> views_;
  std::unordered_set<std::string> released_initializers_;
  PlanOrder order_;  // the groups' order, and each node's place, each value's readers, the graph outputs
  std::vector<int> memory_owner_;  // per memory kind: EP index owning it (-1 host)
  std::vector<size_t> stream_of_ep_;  // per EP: its stream once it has one (SIZE_MAX before)
  std::unordered_map<std::string, SlotId> value_slot_;
  std::unordered_set<SlotId> input_slots_;  // the slots in plan_->inputs
};

}  // namespace

Expected<std::unique_ptr<ExecutionPlan>> build_plan(const ir::Graph& graph, const partition::Assignment& assignment,
                                                    const std::vector<plugin_host::EpInstance*>& eps,
                                                    const PlanOptions& options) {
  return PlanBuilder(graph, assignment, eps, options).build();
}

}  // namespace loom::exec
