#include "transform/passes/pipeline.h"

#include <algorithm>

#include "loom/graph_passes.h"
#include "transform/passes/passes.h"

namespace loom::transform {
namespace {

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

}  // namespace loom::transform
