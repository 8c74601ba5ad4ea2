#include "transform/pass_manager.h"

#include <chrono>

#include "base/logging.h"

namespace loom::transform {
namespace {

// Rounds after which a still-changing graph is left as it is: each pass
// strictly shrinks or simplifies the graph, so this only guards bugs.
constexpr int kMaxRounds = 8;

std::vector<std::unique_ptr<Pass>> all_passes() {
  std::vector<std::unique_ptr<Pass>> p;
  p.push_back(make_gradient_lowering());
  p.push_back(make_constant_folding());
  p.push_back(make_reshape_shape_folding());
  p.push_back(make_identity_elimination());
  p.push_back(make_dead_code_elimination());
  return p;
}

}  // namespace

Status optimize(ir::Graph& graph, OptimizationLevel level, PassContext& ctx) {
  std::vector<std::unique_ptr<Pass>> passes = all_passes();
  for (int round = 0; round < kMaxRounds; ++round) {
    bool any = false;
    for (auto& pass : passes) {
      if (static_cast<int>(pass->level()) > static_cast<int>(level)) continue;
      const auto start = std::chrono::steady_clock::now();
      bool changed = false;
      Status st = pass->run(graph, ctx, &changed);
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      log::logger()->debug("{}: pass {} round {}: {} in {:.2f} ms", ctx.model_name, pass->name(), round,
                           changed ? "changed the graph" : "no change", ms);
      if (!st) return st.with_context("pass " + pass->name());
      any = any || changed;
    }
    if (!any) break;
  }
  return Status::ok();
}

}  // namespace loom::transform
