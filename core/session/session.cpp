#include "session/session_impl.h"

#include <algorithm>

#include "base/logging.h"
#include "exec/plan_builder.h"
#include "onnx/model_saver.h"
#include "plugin_host/plugin_registry.h"
#include "session/fusion_gate.h"
#include "session/inter_op_pool.h"
#include "session/node_evaluator.h"
#include "session/static_limits.h"
#include "transform/passes/pipeline.h"

namespace loom {

namespace {
onnxio::LoadOptions load_options(const Environment& env) {
  onnxio::LoadOptions o;
  o.schemas = env.registry().op_schemas();
  o.max_model_bytes = env.config().max_model_mb << 20;
  o.max_nodes = env.config().max_nodes;
  o.max_tensor_bytes = env.config().max_tensor_mb << 20;
  return o;
}
}  // namespace

Session::Session() : impl_(std::make_unique<Impl>()) {}
Session::~Session() = default;

ValueInfo Session::Impl::declared(const std::string& name) const {
  ValueInfo vi;
  vi.name = name;
  if (const ir::ValueType* t = graph->type_of(name)) {
    vi.kind = t->kind;
    vi.dtype = t->dtype;
    vi.has_shape = t->has_shape;
    vi.shape = t->dims;
    vi.key_dtype = t->key_dtype;
  }
  return vi;
}

Status Session::Impl::prepare(onnxio::LoadedModel model, const SessionOptions& options) {
  model_name = model.source;
  metadata = std::move(model.metadata);
  graph = model.graph;
  arenas = std::make_unique<memory::MemoryArenas>(env->config());
  size_t priority_count = 0;
  int fallback = -1;
  LOOM_RETURN_IF_ERROR(create_eps(options, &priority_count, &fallback));

  // Inputs/outputs as declared, before transformations rename anything.
  for (const std::string& in : graph->inputs) {
    if (graph->is_initializer(in)) {
      overridable.push_back(declared(in));
      continue;
    }
    inputs.push_back(declared(in));
    required_inputs.insert(in);
  }
  for (const std::string& out : graph->outputs) outputs.push_back(declared(out));

  // The evaluator for constant folding runs on the first host-memory kernel EP.
  transform::PassContext ctx;
  ctx.model_name = model_name;
  for (plugin_host::EpInstance* ep : eps)
    if (ep->uses_host_memory() && ep->has_own_kernels()) {
      ctx.evaluate = session::make_node_evaluator(*ep, env->config().max_tensor_mb << 20);
      break;
    }
  partition::PartitionInputs gate_inputs;
  gate_inputs.eps = eps;
  gate_inputs.priority_count = priority_count;
  gate_inputs.fallback = fallback;
  gate_inputs.policy = env->config().fallback;
  gate_inputs.model_name = model_name;
  session::FusionGate gate(gate_inputs);
  ctx.accept_fusion = [&gate](const ir::Graph& g, const std::vector<ir::NodeId>& replaced, const ir::Node& fused,
                              const std::map<std::string, ir::ValueType>& staged,
                              const std::map<std::string, Tensor>& staged_initializers) {
    return gate.accept(g, replaced, fused, staged, staged_initializers);
  };
  // Float16 compute the first provider does not run moves to float32
  // before the fusions, which then see float32 as in a float32 model.
  if (env->config().precision != Precision::kFloat16) LOOM_RETURN_IF_ERROR(convert_precision(gate_inputs, false));
  transform::OptimizeOptions optimize_options;
  optimize_options.level = env->config().optimization_level;
  optimize_options.disabled.insert(env->config().disabled_passes.begin(), env->config().disabled_passes.end());
  optimize_options.stop_after_pass = env->config().stop_after_pass;
  const auto transform_start = profile::Clock::now();
  std::vector<transform::PassRun> pass_runs;
  int numbered_runs = 0;
  LOOM_RETURN_IF_ERROR(
      transform::optimize(*graph, optimize_options, ctx, profiler ? &pass_runs : nullptr, &numbered_runs)
          .with_context(model_name));
  if (env->config().precision == Precision::kFloat16) LOOM_RETURN_IF_ERROR(convert_precision(gate_inputs, true));
  // Layouts last, on the compute's final element types, asked of a fresh
  // trial placement (the fusions and conversions changed the graph).
  session::FusionGate layout_gate(gate_inputs);
  ctx.accept_fusion = [&layout_gate](const ir::Graph& g, const std::vector<ir::NodeId>& replaced,
                                     const ir::Node& changed, const std::map<std::string, ir::ValueType>& staged,
                                     const std::map<std::string, Tensor>& staged_initializers) {
    return layout_gate.prefers(g, replaced, changed, staged, staged_initializers);
  };
  LOOM_RETURN_IF_ERROR(
      transform::optimize_layout(*graph, optimize_options, ctx, profiler ? &pass_runs : nullptr, numbered_runs)
          .with_context(model_name));
  LOOM_RETURN_IF_ERROR(
      session::check_static_tensor_sizes(*graph, env->config().max_tensor_mb << 20).with_context(model_name));
  if (profiler) {
    profiler->phase("transform", transform_start);
    for (const transform::PassRun& r : pass_runs)
      profiler->span(profile::kHostPid, profile::kSessionTid, "session", "pass", profiler->us(r.start), r.ms * 1000,
                     {{"pass", r.pass}, {"changed", r.changed}, {"round", r.round}});
  }
  if (!options.optimized_model_path.empty()) {
    onnxio::SaveOptions save_options;
    save_options.external_data_threshold = options.optimized_model_external_threshold;
    LOOM_RETURN_IF_ERROR(onnxio::save_model(*graph, save_options, options.optimized_model_path)
                             .with_context(model_name + ": saving the optimized model"));
  }

  partition_inputs.eps = eps;
  partition_inputs.priority_count = priority_count;
  partition_inputs.fallback = fallback;
  partition_inputs.policy = env->config().fallback;
  partition_inputs.model_name = model_name;
  partition::PartitionInputs pin = partition_inputs;
  pin.graph = graph.get();
  const auto partition_start = profile::Clock::now();
  LOOM_ASSIGN_OR_RETURN(partition::Assignment assignment, partition::partition(pin));
  if (profiler) profiler->phase("partition", partition_start);
  placement = assignment.report;
  const auto plan_start = profile::Clock::now();
  exec::PlanOptions main_options = plan_options({});
  main_options.check_shapes = true;
  // Weights a partition packed while compiling are freed at once, weight
  // by weight, so the originals and the packed copies are never all held.
  std::map<std::string, exec::ConstantStore::TypeOnly> packed;
  std::vector<std::string> packed_names;
  main_options.release_initializer = [&](const std::string& name) {
    auto it = graph->initializers.find(name);
    if (it == graph->initializers.end()) return;
    packed.emplace(name, exec::ConstantStore::TypeOnly{it->second.dtype(), it->second.dims()});
    packed_names.push_back(name);
    it->second = Tensor();
  };
  LOOM_ASSIGN_OR_RETURN(plan, exec::build_plan(*graph, assignment, eps, main_options));
  if (profiler) profiler->phase("plan", plan_start, {{"packed_constants", packed_names}});
  // The plan's runs take the initializers from here on; the graph keeps
  // their types (what runs release is then freed, not held by the IR).
  resources =
      std::make_unique<exec::RunResourcePool>(*plan, eps, *arenas, exec::ConstantStore::take(*plan, *graph, packed));
  make_recorder();
  for (const exec::Slot& slot : plan->slots)
    if (slot.kind == exec::SlotKind::kIntermediate && slot.planned_offset < 0) has_unplanned_intermediates = true;
  if (env->config().execution_mode == ExecutionMode::kParallel)
    inter_op = env->config().shared_inter_op ? env->shared_inter_op_pool() : session::make_inter_op_pool(env->config());
  log::logger()->debug("{}: plan\n{}", model_name, plan->to_string());
  return Status::ok();
}

exec::PlanOptions Session::Impl::plan_options(std::vector<std::string> extra_inputs) {
  exec::PlanOptions o;
  o.extra_inputs = std::move(extra_inputs);
  o.plan_subgraph = [this](const ir::Graph& g) { return plan_subgraph(g); };
  o.profiler = profiler.get();
  if (partition_inputs.fallback >= 0) o.plan_fallback = [this](const ir::Graph& g) { return plan_on_fallback(g); };
  return o;
}

Expected<std::shared_ptr<const exec::SubgraphPlan>> Session::Impl::plan_on_fallback(const ir::Graph& nodes) {
  partition::PartitionInputs pin = partition_inputs;
  pin.graph = &nodes;
  pin.priority_count = 0;  // every node to the fallback provider
  pin.policy = FallbackPolicy::kAllow;
  pin.model_name = model_name + " (" + nodes.name + ")";
  LOOM_ASSIGN_OR_RETURN(partition::Assignment assignment, partition::partition(pin));
  auto sub = std::make_shared<exec::SubgraphPlan>();
  sub->formal_inputs = nodes.inputs;
  LOOM_ASSIGN_OR_RETURN(sub->plan, exec::build_plan(nodes, assignment, eps, exec::PlanOptions{}));
  sub->resources =
      std::make_unique<exec::RunResourcePool>(*sub->plan, eps, *arenas, exec::ConstantStore::share(*sub->plan, nodes));
  return std::shared_ptr<const exec::SubgraphPlan>(std::move(sub));
}

// Subgraphs are partitioned with the session's EPs and policy (an EP may
// claim nodes inside them) and planned like the main graph; the values they
// capture from enclosing graphs become extra inputs bound by name.
Expected<std::shared_ptr<const exec::SubgraphPlan>> Session::Impl::plan_subgraph(const ir::Graph& subgraph) {
  partition::PartitionInputs pin = partition_inputs;
  pin.graph = &subgraph;
  pin.model_name = model_name + " subgraph '" + subgraph.name + "'";
  LOOM_ASSIGN_OR_RETURN(partition::Assignment assignment, partition::partition(pin));
  auto sub = std::make_shared<exec::SubgraphPlan>();
  sub->formal_inputs = subgraph.inputs;
  for (const std::string& c : subgraph.outer_scope_references()) sub->captures.push_back(c);
  LOOM_ASSIGN_OR_RETURN(sub->plan, exec::build_plan(subgraph, assignment, eps, plan_options(sub->captures)));
  sub->resources = std::make_unique<exec::RunResourcePool>(*sub->plan, eps, *arenas,
                                                           exec::ConstantStore::share(*sub->plan, subgraph));
  return std::shared_ptr<const exec::SubgraphPlan>(std::move(sub));
}

void Session::Impl::start_profiling(profile::Clock::time_point start, const SessionOptions& options) {
  if (!env->config().profiling_enabled && !options.profiling) return;
  profile_path = options.profile_path.empty() ? env->config().profiling_path : options.profile_path;
  profiler = std::make_unique<profile::Profiler>(start);
  profiler->phase("load", start);
}

Expected<std::string> Session::end_profiling() const {
  const Impl& s = *impl_;
  if (!s.profiler)
    return invalid_argument(s.model_name + ": profiling is off (config profiling.enabled or SessionOptions::profiling)");
  std::vector<std::string> providers;
  for (const plugin_host::EpInstance* ep : s.eps) providers.push_back(ep->name());
  const std::string& path = s.profile_path;
  LOOM_RETURN_IF_ERROR(s.profiler->write(path, s.model_name, providers).with_context(s.model_name));
  return path;
}

Expected<std::unique_ptr<Session>> Session::create(std::shared_ptr<Environment> env, const std::string& model_path,
                                                   const SessionOptions& options) {
  if (!env) return invalid_argument("Session::create: no environment");
  const auto start = profile::Clock::now();
  LOOM_ASSIGN_OR_RETURN(onnxio::LoadedModel model, onnxio::load_model_file(model_path, load_options(*env)));
  std::unique_ptr<Session> s(new Session());
  s->impl_->env = std::move(env);
  s->impl_->start_profiling(start, options);
  LOOM_RETURN_IF_ERROR(s->impl_->prepare(std::move(model), options));
  return s;
}

Expected<std::unique_ptr<Session>> Session::create_from_bytes(std::shared_ptr<Environment> env,
                                                              const std::string& model_bytes,
                                                              const SessionOptions& options) {
  if (!env) return invalid_argument("Session::create: no environment");
  const auto start = profile::Clock::now();
  // No folder to resolve external data against: a model given as bytes
  // must hold all its data.
  LOOM_ASSIGN_OR_RETURN(onnxio::LoadedModel model,
                        onnxio::load_model_bytes(model_bytes, "", "<model bytes>", load_options(*env)));
  std::unique_ptr<Session> s(new Session());
  s->impl_->env = std::move(env);
  s->impl_->start_profiling(start, options);
  LOOM_RETURN_IF_ERROR(s->impl_->prepare(std::move(model), options));
  return s;
}

const std::vector<ValueInfo>& Session::inputs() const { return impl_->inputs; }
const std::vector<ValueInfo>& Session::outputs() const { return impl_->outputs; }
const std::vector<ValueInfo>& Session::overridable_initializers() const { return impl_->overridable; }
const PlacementReport& Session::placement() const { return impl_->placement; }
const ModelMetadata& Session::metadata() const { return impl_->metadata; }
std::string Session::describe_plan() const { return impl_->plan->to_string(); }
int64_t Session::planned_peak_bytes() const { return impl_->plan->planned_peak_bytes(); }

size_t Session::memory_pattern_count() const { return impl_->patterns.size(); }

std::vector<MemoryStats> Session::memory_stats() const {
  std::vector<MemoryStats> out;
  for (const exec::MemoryKind& m : impl_->plan->memories) {
    MemoryStats s;
    s.memory = plugin_host::memory_name(m.info);
    s.planned_peak_bytes = m.arena_bytes;
    out.push_back(s);
  }
  for (const memory::MemoryArenas::Entry& e : impl_->arenas->stats()) {
    auto it = std::find_if(out.begin(), out.end(), [&](const MemoryStats& s) { return s.memory == e.memory; });
    if (it == out.end()) {
      out.emplace_back();
      it = std::prev(out.end());
      it->memory = e.memory;
    }
    it->limit_bytes = e.limit_bytes;
    it->reserved_bytes = e.stats.reserved_bytes;
    it->in_use_bytes = e.stats.in_use_bytes;
    it->peak_in_use_bytes = e.stats.peak_in_use_bytes;
    it->peak_reserved_bytes = e.stats.peak_reserved_bytes;
    it->allocations = e.stats.allocations;
    it->failed_allocations = e.stats.failed_allocations;
  }
  return out;
}

namespace {
// Values a run computes in the top-level graph (copies between memories
// are named "<value>@<memory>" and are not the model's values).
bool observable(const exec::Slot& slot) {
  return (slot.kind == exec::SlotKind::kIntermediate || slot.kind == exec::SlotKind::kGraphOutput) &&
         slot.name.find('@') == std::string::npos;
}
}  // namespace

std::vector<ValueInfo> Session::observable_values() const {
  std::vector<ValueInfo> out;
  for (const exec::Slot& slot : impl_->plan->slots) {
    if (!observable(slot)) continue;
    ValueInfo vi;
    vi.name = slot.name;
    vi.kind = slot.type.kind;
    vi.dtype = slot.type.dtype;
    vi.has_shape = slot.type.has_shape;
    vi.shape = slot.type.dims;
    out.push_back(std::move(vi));
  }
  return out;
}

Expected<std::unique_ptr<exec::ValueObserver>> Session::Impl::value_observer(const RunOptions& options) const {
  if (!options.observe || options.observed_values.empty()) return std::unique_ptr<exec::ValueObserver>();
  auto observer = std::make_unique<exec::ValueObserver>();
  observer->watched.assign(plan->slots.size(), 0);
  observer->see = options.observe;
  std::map<std::string, exec::SlotId> by_name;
  for (size_t s = 0; s < plan->slots.size(); ++s)
    if (observable(plan->slots[s])) by_name[plan->slots[s].name] = static_cast<exec::SlotId>(s);
  for (const std::string& name : options.observed_values) {
    auto it = by_name.find(name);
    if (it == by_name.end())
      return invalid_argument(model_name + ": cannot observe '" + name +
                              "': the session's plan computes no such value (an input or initializer, a value "
                              "removed or renamed by optimization, or inside a fused partition; see "
                              "Session::observable_values)");
    observer->watched[it->second] = 1;
  }
  return observer;
}

exec::RunLimits Session::Impl::run_limits(const RunOptions& options) const {
  const Config& c = env->config();
  return exec::RunLimits::make(options.cancel ? options.cancel->flag() : nullptr, c.run_timeout_ms,
                               c.max_tensor_mb << 20);
}

Expected<std::optional<log::RunLogContext>> Session::Impl::run_log(const RunOptions& options) const {
  if (options.log_level.empty() && options.tag.empty()) return std::optional<log::RunLogContext>();
  if (!options.log_level.empty() && !log::is_level_name(options.log_level))
    return invalid_argument(model_name + ": run log level '" + options.log_level +
                            "' is not one of trace, debug, info, warn, error, off");
  log::RunLogContext c;
  c.level = options.log_level.empty() ? log::effective_level() : spdlog::level::from_str(options.log_level);
  c.tag = options.tag;
  return std::optional<log::RunLogContext>(c);
}

void Session::Impl::make_recorder() {
  bool asked = false;
  for (const plugin_host::EpInstance* ep : eps) asked = asked || ep->captures_runs();
  if (!asked) return;
  exec::CaptureLayout layout = exec::capture_layout(*plan, eps);
  if (!layout.why_not.empty()) {
    log::write(spdlog::level::warn, model_name + ": runs are not recorded and replayed: " + layout.why_not);
    return;
  }
  log::write(spdlog::level::info, model_name + ": runs with the same input shapes are recorded once and replayed (" +
                                      std::to_string(layout.region.size()) + " launches on provider '" +
                                      eps[layout.ep]->name() + "')");
  recorder = std::make_unique<exec::RunRecorder>(*plan, eps, std::move(layout), *resources);
}

Expected<std::vector<Value>> Session::run_values(const std::map<std::string, Value>& given,
                                                 const std::vector<std::string>& output_names,
                                                 const RunOptions& run_options) const {
  std::map<std::string, Value> scalar_storage;
  const std::map<std::string, Value>& inputs = impl_->with_scalar_feeds(given, scalar_storage);
  exec::ExecuteOptions execute_options;
  Impl::RunSpan run_span(*impl_, run_options, execute_options);
  const std::string context = run_options.tag.empty() ? impl_->model_name
                                                      : impl_->model_name + ": [" + run_options.tag + "]";
  LOOM_RETURN_IF_ERROR(impl_->validate_inputs(inputs));
  const exec::ExecutionPlan& plan = *impl_->plan;
  std::vector<exec::SlotId> wanted;
  if (output_names.empty()) {
    wanted = plan.outputs;
  } else {
    for (const std::string& name : output_names) {
      auto it = std::find(plan.output_names.begin(), plan.output_names.end(), name);
      if (it == plan.output_names.end())
        return invalid_argument(impl_->model_name + ": unknown output '" + name + "'");
      wanted.push_back(plan.outputs[it - plan.output_names.begin()]);
    }
  }
  // Views of the caller's values; tensors share storage, nothing is copied.
  std::vector<std::unique_ptr<LOOM_Value>> owned;
  std::map<std::string, const LOOM_Value*> feeds;
  for (const auto& [name, v] : inputs) {
    owned.push_back(plugin_host::from_public(v));
    feeds[name] = owned.back().get();
  }
  LOOM_ASSIGN_OR_RETURN(std::optional<log::RunLogContext> run_log, impl_->run_log(run_options));
  execute_options.log = run_log ? &*run_log : nullptr;
  execute_options.limits = impl_->run_limits(run_options);
  execute_options.inter_op = impl_->inter_op.get();
  LOOM_ASSIGN_OR_RETURN(std::unique_ptr<exec::ValueObserver> observer, impl_->value_observer(run_options));
  execute_options.observer = observer.get();
  // Dynamic shapes: the first sequential run with these input shapes
  // records what its unplanned intermediates take; later ones reuse the
  // memory pattern planned from that.
  std::string signature;
  std::shared_ptr<const exec::MemoryPattern> pattern;
  std::vector<int64_t> recorded;
  if (impl_->has_unplanned_intermediates && !impl_->inter_op && impl_->shape_signature(inputs, &signature)) {
    pattern = impl_->patterns.find(signature);
    if (pattern) execute_options.pattern = pattern.get();
    else execute_options.recorded = &recorded;
  }
  // Recorded runs (profiled and observed runs go the usual way, step by step).
  std::optional<Expected<std::vector<exec::ValuePtr>>> replayed;
  std::string typed_signature;
  if (impl_->recorder != nullptr && execute_options.profiler == nullptr && observer == nullptr &&
      impl_->shape_signature(inputs, &typed_signature)) {
    for (const auto& [name, v] : inputs) typed_signature += dtype_name(v.tensor().dtype()) + ";";
    replayed = impl_->recorder->run(feeds, wanted, typed_signature, execute_options.limits);
  }
  auto result = replayed ? std::move(*replayed)
                         : exec::execute(plan, impl_->eps, feeds, wanted, *impl_->resources, execute_options);
  if (!result) return result.status().with_context(context);
  if (!replayed && execute_options.recorded != nullptr)
    impl_->patterns.insert(signature,
                           std::make_shared<const exec::MemoryPattern>(exec::build_memory_pattern(plan, recorded)));
  std::vector<Value> out;
  for (const auto& v : *result) {
    LOOM_ASSIGN_OR_RETURN(Value pv, plugin_host::to_public(*v));
    out.push_back(std::move(pv));
  }
  return out;
}

Expected<std::vector<Tensor>> Session::run(const std::map<std::string, Tensor>& inputs,
                                           const std::vector<std::string>& output_names) const {
  return run(inputs, output_names, RunOptions{});
}

Expected<std::vector<Tensor>> Session::run(const std::map<std::string, Tensor>& inputs,
                                           const std::vector<std::string>& output_names,
                                           const RunOptions& options) const {
  std::map<std::string, Value> values(inputs.begin(), inputs.end());
  LOOM_ASSIGN_OR_RETURN(std::vector<Value> result, run_values(values, output_names, options));
  std::vector<Tensor> out;
  for (size_t i = 0; i < result.size(); ++i) {
    if (!result[i].is_tensor())
      return invalid_argument(impl_->model_name + ": output " + std::to_string(i) +
                              " is a sequence or optional; use run_values");
    out.push_back(result[i].tensor());
  }
  return out;
}

}  // namespace loom
