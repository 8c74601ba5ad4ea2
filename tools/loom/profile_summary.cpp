#include "profile_summary.h"

#include <algorithm>
#include <map>
#include <set>

namespace loom::tools::profile {
namespace {

constexpr double kUsPerMs = 1000.0;

double ms(double us) { return us / kUsPerMs; }

bool is_compute_step(const Span& s) { return s.kind == "kernel" || s.kind == "partition"; }

// Length of the union of [ts, end) intervals, in µs.
double union_length(std::vector<std::pair<double, double>> iv) {
  std::sort(iv.begin(), iv.end());
  double total = 0, cur_start = 0, cur_end = 0;
  bool open = false;
  for (const auto& [a, b] : iv) {
    if (!open || a > cur_end) {
      if (open) total += cur_end - cur_start;
      cur_start = a;
      cur_end = b;
      open = true;
    } else {
      cur_end = std::max(cur_end, b);
    }
  }
  if (open) total += cur_end - cur_start;
  return total;
}

RunMetrics run_metrics(const Trace& trace, int64_t run) {
  RunMetrics m;
  m.run = run;
  const Span* run_span = nullptr;
  const Span* executor = nullptr;
  std::vector<std::pair<double, double>> steps, device;
  double step_min = 0, step_max = 0, dev_min = 0, dev_max = 0;
  for (const Span& s : trace.spans) {
    if (s.run != run) continue;
    if (s.cat == "run" && run_span == nullptr) {
      run_span = &s;
    } else if (s.cat == "executor" && executor == nullptr) {
      executor = &s;
    } else if (s.cat == "step") {
      if (steps.empty() || s.ts < step_min) step_min = s.ts;
      if (steps.empty() || s.end() > step_max) step_max = s.end();
      steps.emplace_back(s.ts, s.end());
      ++m.steps;
      const bool on_device_stream = s.stream.value_or(0) != 0;
      if (on_device_stream && (is_compute_step(s) || s.kind == "copy")) m.launch_ms += s.dur;
      if (s.kind == "barrier" || (s.kind == "wait" && !on_device_stream)) m.host_wait_ms += s.dur;
      if (is_compute_step(s)) {
        const double k = s.kernel_us.value_or(0);
        m.kernel_ms += k;
        m.in_nodes_outside_kernels_ms += s.dur - k;
      } else if (s.kind == "copy") {
        ++m.copy_count;
        m.copy_bytes += s.bytes;
        m.copy_ms += s.dur;
      }
    } else if (s.cat == "device") {
      if (device.empty() || s.ts < dev_min) dev_min = s.ts;
      if (device.empty() || s.end() > dev_max) dev_max = s.end();
      device.emplace_back(s.ts, s.end());
    }
  }
  // Sums were taken in µs: convert once so round µs stay exact.
  m.kernel_ms = ms(m.kernel_ms);
  m.in_nodes_outside_kernels_ms = ms(m.in_nodes_outside_kernels_ms);
  m.copy_ms = ms(m.copy_ms);
  m.launch_ms = ms(m.launch_ms);
  m.host_wait_ms = ms(m.host_wait_ms);
  if (run_span != nullptr) {
    m.tag = run_span->tag;
    m.run_ms = ms(run_span->dur);
  }
  if (executor != nullptr) m.executor_ms = ms(executor->dur);
  if (run_span != nullptr && executor != nullptr) {
    m.before_executor_ms = ms(executor->ts - run_span->ts);
    m.after_executor_ms = ms(run_span->end() - executor->end());
  }
  if (!steps.empty()) m.node_span_ms = ms(step_max - step_min);
  if (executor != nullptr) m.gaps_between_nodes_ms = ms(executor->dur - union_length(steps));
  if (!device.empty()) {
    const double busy = union_length(device);
    m.device_busy_ms = ms(busy);
    m.device_idle_gaps_ms = ms(dev_max - dev_min - busy);
  }
  return m;
}

std::optional<double> mean_of(std::vector<double> v) {
  if (v.empty()) return std::nullopt;
  double sum = 0;
  for (double x : v) sum += x;
  return sum / v.size();
}

std::optional<double> median_of(std::vector<double> v) {
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

Phases phases(const Trace& trace, size_t top) {
  Phases p;
  std::map<std::string, PassRow> passes;
  auto add = [](std::optional<double>& slot, double us) { slot = slot.value_or(0) + ms(us); };
  for (const Span& s : trace.spans) {
    if (s.cat != "session") continue;
    if (s.name == "load") add(p.load_ms, s.dur);
    else if (s.name == "transform") add(p.transform_ms, s.dur);
    else if (s.name == "partition") add(p.partition_ms, s.dur);
    else if (s.name == "plan") add(p.plan_ms, s.dur);
    else if (s.name == "compile") {
      add(p.compile_ms, s.dur);
      ++p.compile_count;
      p.slowest_compiles.push_back({s.partition, s.ep, ms(s.dur)});
    } else if (s.name == "pass") {
      ++p.pass_count;
      PassRow& row = passes[s.pass.empty() ? std::string("?") : s.pass];
      row.name = s.pass.empty() ? "?" : s.pass;
      ++row.calls;
      row.total_ms += ms(s.dur);
      if (s.changed.value_or(false)) ++row.changed;
    }
  }
  for (auto& [name, row] : passes) p.slowest_passes.push_back(row);
  std::stable_sort(p.slowest_passes.begin(), p.slowest_passes.end(),
                   [](const PassRow& a, const PassRow& b) { return a.total_ms > b.total_ms; });
  if (p.slowest_passes.size() > top) p.slowest_passes.resize(top);
  std::stable_sort(p.slowest_compiles.begin(), p.slowest_compiles.end(),
                   [](const CompileRow& a, const CompileRow& b) { return a.ms > b.ms; });
  if (p.slowest_compiles.size() > top) p.slowest_compiles.resize(top);
  return p;
}

}  // namespace

std::vector<MetricValue> metric_values(const RunMetrics& m) {
  return {
      {"steps", "steps", static_cast<double>(m.steps)},
      {"run time", "run_ms", m.run_ms},
      {"executor time", "executor_ms", m.executor_ms},
      {"before executor", "before_executor_ms", m.before_executor_ms},
      {"after executor", "after_executor_ms", m.after_executor_ms},
      {"node timeline span", "node_span_ms", m.node_span_ms},
      {"sum of kernel times", "kernel_ms", m.kernel_ms},
      {"inside nodes outside kernels", "in_nodes_outside_kernels_ms", m.in_nodes_outside_kernels_ms},
      {"gaps between nodes", "gaps_between_nodes_ms", m.gaps_between_nodes_ms},
      {"host launching device work", "launch_ms", m.launch_ms},
      {"host waiting for the device", "host_wait_ms", m.host_wait_ms},
      {"device busy", "device_busy_ms", m.device_busy_ms},
      {"device idle gaps", "device_idle_gaps_ms", m.device_idle_gaps_ms},
      {"copies", "copy_count", static_cast<double>(m.copy_count)},
      {"copy bytes", "copy_bytes", m.copy_bytes},
      {"copy time", "copy_ms", m.copy_ms},
  };
}

Summary summarize(const Trace& trace, std::optional<int64_t> only_run, size_t top) {
  Summary sum;
  std::vector<int64_t> ids = only_run ? std::vector<int64_t>{*only_run} : trace.run_ids();
  const std::set<int64_t> selected(ids.begin(), ids.end());
  for (int64_t id : ids) sum.runs.push_back(run_metrics(trace, id));
  for (const Span& s : trace.spans)
    if (s.cat == "device") sum.has_device = true;

  if (sum.runs.size() > 1) {
    const size_t n = metric_values(sum.runs.front()).size();
    for (size_t i = 0; i < n; ++i) {
      std::vector<double> values;
      for (const RunMetrics& r : sum.runs)
        if (auto v = metric_values(r)[i].value) values.push_back(*v);
      const MetricValue base = metric_values(sum.runs.front())[i];
      sum.mean.push_back({base.label, base.key, mean_of(values)});
      sum.median.push_back({base.label, base.key, median_of(values)});
    }
  }

  // Device time per (run, step), to join onto the op groups.
  std::map<std::pair<int64_t, int64_t>, double> device_us;
  for (const Span& s : trace.spans)
    if (s.cat == "device" && s.run && s.step && selected.count(*s.run)) device_us[{*s.run, *s.step}] += s.dur;

  std::map<std::pair<std::string, std::string>, OpRow> groups;
  std::map<std::string, OpRow> per_ep;
  double total_us = 0;
  for (const Span& s : trace.spans) {
    if (s.cat != "step" || !s.run || !selected.count(*s.run) || !is_compute_step(s)) continue;
    double dev = 0;
    if (s.step)
      if (auto it = device_us.find({*s.run, *s.step}); it != device_us.end()) dev = it->second;
    for (OpRow* row : {&groups[{s.op_type, s.ep}], &per_ep[s.ep]}) {
      ++row->calls;
      row->total_ms += s.dur;  // µs until the conversion below
      row->kernel_ms += s.kernel_us.value_or(0);
      row->device_ms += dev;
    }
    groups[{s.op_type, s.ep}].op_type = s.op_type;
    groups[{s.op_type, s.ep}].ep = s.ep;
    per_ep[s.ep].ep = s.ep;
    total_us += s.dur;
  }
  auto finish = [&](OpRow row) {
    row.percent = total_us > 0 ? 100.0 * row.total_ms / total_us : 0;
    row.mean_ms = row.calls ? ms(row.total_ms) / row.calls : 0;
    row.total_ms = ms(row.total_ms);
    row.kernel_ms = ms(row.kernel_ms);
    row.device_ms = ms(row.device_ms);
    return row;
  };
  auto by_total = [](const OpRow& a, const OpRow& b) { return a.total_ms > b.total_ms; };
  for (const auto& [key, row] : groups) sum.ops.push_back(finish(row));
  for (const auto& [key, row] : per_ep) sum.eps.push_back(finish(row));
  std::stable_sort(sum.ops.begin(), sum.ops.end(), by_total);
  std::stable_sort(sum.eps.begin(), sum.eps.end(), by_total);
  sum.op_groups = static_cast<int64_t>(sum.ops.size());
  sum.op_total_ms = ms(total_us);
  if (sum.ops.size() > top) sum.ops.resize(top);

  std::map<std::pair<std::string, std::string>, OpRow> parts;
  for (const Span& s : trace.spans) {
    if (s.cat != "part" || !s.run || !selected.count(*s.run)) continue;
    const std::string what = s.name.substr(0, s.name.find(':'));
    OpRow& row = parts[{what, s.ep}];
    row.op_type = what;
    row.ep = s.ep;
    ++row.calls;
    row.total_ms += s.dur;
    row.kernel_ms += s.dur;
  }
  for (const auto& [key, row] : parts) sum.parts.push_back(finish(row));
  std::stable_sort(sum.parts.begin(), sum.parts.end(), by_total);
  if (sum.parts.size() > top) sum.parts.resize(top);
  sum.phases = phases(trace, top);
  return sum;
}

}  // namespace loom::tools::profile
