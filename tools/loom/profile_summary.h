// The numbers `loom profile summarize` prints: per-run time breakdown, the
// costliest op types, totals per EP and the session phases, computed from a
// Trace (profile_trace.h). All times are milliseconds.
//
// Per run k (events with args.run == k):
//   run_ms                     run.dur
//   executor_ms                executor.dur
//   before_executor_ms         executor.ts - run.ts
//   after_executor_ms          (run.ts + run.dur) - (executor.ts + executor.dur)
//   node_span_ms               max(step end) - min(step start)
//   kernel_ms                  sum of kernel_us over kernel + partition steps
//   in_nodes_outside_kernels_ms  sum of (dur - kernel_us) over kernel + partition steps
//   gaps_between_nodes_ms      executor.dur - |union of the step intervals|
//   device_busy_ms             |union of the device intervals| (pid 2)
//   device_idle_gaps_ms        (last device end - first device start) - device_busy_ms
//   copy_count, copy_bytes, copy_ms   count, sum bytes, sum dur of copy steps
// A metric whose events are missing (no executor event, no device lane) is
// absent. Steps missing kernel_us count with kernel time 0.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "profile_trace.h"

namespace loom::tools::profile {

struct RunMetrics {
  int64_t run = 0;
  std::string tag;
  int64_t steps = 0;
  std::optional<double> run_ms, executor_ms, before_executor_ms, after_executor_ms;
  std::optional<double> node_span_ms;
  double kernel_ms = 0;
  double in_nodes_outside_kernels_ms = 0;
  std::optional<double> gaps_between_nodes_ms;
  std::optional<double> device_busy_ms, device_idle_gaps_ms;
  int64_t copy_count = 0;
  double copy_bytes = 0;
  double copy_ms = 0;
  // The host's side of asynchronous work: time spent launching steps on
  // device streams (kernels, partitions, copies), and time blocked waiting
  // for the device (host waits on events, the final barrier).
  double launch_ms = 0;
  double host_wait_ms = 0;
};

// Name and value of each metric in print order; text labels and JSON keys.
struct MetricValue {
  const char* label;  // "run time"
  const char* key;    // "run_ms"
  std::optional<double> value;
};
std::vector<MetricValue> metric_values(const RunMetrics& m);

// Steps of kernel + partition kind, grouped by (op_type, ep) over the
// selected runs. total_ms sums step dur; kernel_ms sums kernel_us;
// percent is total_ms over the sum of total_ms of every group;
// device_ms sums the device events matching (run, step).
struct OpRow {
  std::string op_type;
  std::string ep;
  int64_t calls = 0;
  double total_ms = 0;
  double mean_ms = 0;
  double kernel_ms = 0;
  double percent = 0;
  double device_ms = 0;
};

struct PassRow {
  std::string name;
  int64_t calls = 0;
  double total_ms = 0;
  int64_t changed = 0;  // calls that changed the graph
};

struct CompileRow {
  std::string partition;
  std::string ep;
  double ms = 0;
};

// Session phases (cat "session"); a phase with no event is absent.
struct Phases {
  std::optional<double> load_ms, transform_ms, partition_ms, compile_ms, plan_ms;
  int64_t compile_count = 0;
  int64_t pass_count = 0;
  std::vector<PassRow> slowest_passes;      // by total_ms, at most top N
  std::vector<CompileRow> slowest_compiles;  // by ms, at most top N
};

struct Summary {
  std::vector<RunMetrics> runs;  // ascending run id
  // Over `runs` when there are two or more: per metric, over the runs that
  // have it. Median of an even count averages the middle two.
  std::vector<MetricValue> mean, median;
  bool has_device = false;
  std::vector<OpRow> ops;  // top N by total_ms
  int64_t op_groups = 0;   // groups before the top-N cut
  double op_total_ms = 0;  // sum over every group
  std::vector<OpRow> eps;  // per EP (op_type empty), by total_ms
  // The parts plugins named inside their steps (cat "part"), grouped by
  // (what ran: the name before its first ':', ep): op_type holds what ran;
  // total_ms and kernel_ms sum the parts' dur, percent is of op_total_ms.
  // Top N by total_ms; empty when no plugin named any.
  std::vector<OpRow> parts;
  Phases phases;
};

// `only_run`: summarize that run alone (it must exist; checked by the
// caller). `top`: rows kept in ops / slowest passes / compiles.
Summary summarize(const Trace& trace, std::optional<int64_t> only_run, size_t top);

}  // namespace loom::tools::profile
