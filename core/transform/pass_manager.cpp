#include "transform/pass_manager.h"

#include <algorithm>
#include <chrono>
#include <map>

#include "base/logging.h"
#include "loom/graph_passes.h"

namespace loom::transform {
namespace {

// Rounds after which a still-changing graph is left as it is: each pass
// strictly shrinks or simplifies the graph, so this only guards bugs.
constexpr int kMaxRounds = 8;

std::vector<std::unique_ptr<Pass>> all_passes() {
  std::vector<std::unique_ptr<Pass>> p;
  p.push_back(make_gradient_lowering());
  // Before constant folding, which would fold the weights' DequantizeLinear.
  p.push_back(make_quantized_activation_removal());
  p.push_back(make_qdq_fusion());
  p.push_back(make_matmul_integer_to_float_fusion());
  p.push_back(make_dynamic_quant_matmul_fusion());
  p.push_back(make_constant_folding());
  p.push_back(make_cast_elimination());
  p.push_back(make_transpose_reshape_simplification());
  p.push_back(make_common_subexpression_elimination());
  p.push_back(make_conv_bn_folding());
  p.push_back(make_conv_scale_folding());
  p.push_back(make_reshape_shape_folding());
  p.push_back(make_identity_elimination());
  p.push_back(make_dead_code_elimination());
  p.push_back(make_shape_inference());
  p.push_back(make_layer_norm_fusion());
  p.push_back(make_gelu_fusion());
  p.push_back(make_fast_gelu_fusion());
  p.push_back(make_attention_fusion());
  p.push_back(make_embed_layer_norm_fusion());
  p.push_back(make_skip_layer_norm_fusion());
  p.push_back(make_matmul_add_fusion());
  p.push_back(make_fused_matmul_fusion());
  p.push_back(make_conv_activation_fusion());
  p.push_back(make_conv1d_as_conv2d());
  p.push_back(make_gemm_activation_fusion());
  return p;
}

// The layout phase: the layout rewrite and the clean-up that cancels the
// Transposes it puts between neighbouring rewritten nodes.
std::vector<std::unique_ptr<Pass>> layout_passes() {
  std::vector<std::unique_ptr<Pass>> p;
  p.push_back(make_channels_last());
  p.push_back(make_transpose_reshape_simplification());
  p.push_back(make_common_subexpression_elimination());
  p.push_back(make_identity_elimination());
  p.push_back(make_dead_code_elimination());
  return p;
}

// Rounds of `passes` until one changes nothing (see optimize). Pass runs
// are numbered from *number on.
Status run_to_fixed_point(std::vector<std::unique_ptr<Pass>>& passes, ir::Graph& graph, const OptimizeOptions& options,
                          PassContext& ctx, std::vector<PassRun>* runs, int* number);

}  // namespace

std::vector<std::pair<std::string, OptimizationLevel>> pass_names() {
  std::vector<std::pair<std::string, OptimizationLevel>> names;
  for (const auto& p : all_passes()) names.emplace_back(p->name(), p->level());
  for (const auto& p : layout_passes())
    if (std::none_of(names.begin(), names.end(), [&](const auto& n) { return n.first == p->name(); }))
      names.emplace_back(p->name(), p->level());
  return names;
}

}  // namespace loom::transform

namespace loom {

std::vector<GraphPassInfo> graph_passes() {
  std::vector<GraphPassInfo> out;
  for (const auto& [name, level] : transform::pass_names()) out.push_back({name, level});
  return out;
}

}  // namespace loom

namespace loom::transform {

Status optimize(ir::Graph& graph, const OptimizeOptions& options, PassContext& ctx, std::vector<PassRun>* runs,
                int* numbered) {
  std::vector<std::pair<std::string, OptimizationLevel>> names = pass_names();
  for (const std::string& d : options.disabled) {
    bool known = false;
    std::string listed;
    for (const auto& [name, level] : names) {
      known |= name == d;
      if (level != OptimizationLevel::kDisabled) listed += (listed.empty() ? "" : ", ") + name;
    }
    if (!known) return invalid_argument("disabled_passes: unknown pass '" + d + "' (passes: " + listed + ")");
  }
  std::vector<std::unique_ptr<Pass>> passes = all_passes();
  int number = 0;
  Status st = run_to_fixed_point(passes, graph, options, ctx, runs, &number);
  if (numbered) *numbered = number;
  return st;
}

Status optimize_layout(ir::Graph& graph, const OptimizeOptions& options, PassContext& ctx, std::vector<PassRun>* runs,
                       int numbered_before) {
  if (static_cast<int>(options.level) < static_cast<int>(OptimizationLevel::kExtended) ||
      options.disabled.count("channels_last"))
    return Status::ok();
  std::vector<std::unique_ptr<Pass>> passes = layout_passes();
  int number = numbered_before;
  return run_to_fixed_point(passes, graph, options, ctx, runs, &number);
}

namespace {

Status run_to_fixed_point(std::vector<std::unique_ptr<Pass>>& passes, ir::Graph& graph, const OptimizeOptions& options,
                          PassContext& ctx, std::vector<PassRun>* runs, int* counter) {
  int& number = *counter;
  std::map<std::string, std::pair<double, int>> totals;  // pass -> (ms, runs that changed the graph)
  bool stopped = false;
  for (int round = 0; round < kMaxRounds && !stopped; ++round) {
    bool any = false;
    for (auto& pass : passes) {
      const bool lowering = pass->level() == OptimizationLevel::kDisabled;
      if (!lowering && (static_cast<int>(pass->level()) > static_cast<int>(options.level) ||
                        options.disabled.count(pass->name())))
        continue;
      if (!lowering && options.stop_after_pass >= 0 && number >= options.stop_after_pass) {
        if (!stopped)
          log::logger()->info("{}: optimization stopped after pass run {} (stop_after_pass)", ctx.model_name, number);
        stopped = true;
        continue;
      }
      PassRun run;
      run.number = lowering ? 0 : ++number;
      run.pass = pass->name();
      run.round = round;
      const auto start = std::chrono::steady_clock::now();
      run.start = start;
      Status st = pass->run(graph, ctx, &run.changed);
      run.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      log::logger()->debug("{}: pass run {} {} (round {}): {} in {:.2f} ms", ctx.model_name, run.number, run.pass,
                           round, run.changed ? "changed the graph" : "no change", run.ms);
      if (!st) return st.with_context("pass " + pass->name() + " (run " + std::to_string(run.number) + ")");
      if (run.changed) ++ctx.graph_version;
      totals[run.pass].first += run.ms;
      totals[run.pass].second += run.changed;
      any = any || run.changed;
      if (runs) runs->push_back(run);
    }
    if (!any) break;
  }
  for (const auto& [name, t] : totals)
    log::logger()->info("{}: pass {}: {:.2f} ms, changed the graph in {} round(s)", ctx.model_name, name, t.first,
                        t.second);
  return Status::ok();
}

}  // namespace

}  // namespace loom::transform
