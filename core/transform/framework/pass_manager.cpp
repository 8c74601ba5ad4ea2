#include "transform/framework/pass_manager.h"

#include <chrono>
#include <map>

#include "base/logging.h"

namespace loom::transform {
namespace {

// Rounds after which a still-changing graph is left as it is: each pass
// strictly shrinks or simplifies the graph, so this only guards bugs.
constexpr int kMaxRounds = 8;

}  // namespace

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

}  // namespace loom::transform
