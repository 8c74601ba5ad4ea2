#include "exec/plan_synchronization.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

namespace loom::exec {

void insert_stream_synchronization(ExecutionPlan& plan, std::vector<std::pair<size_t, SlotId>>& step_reads) {
  if (plan.streams.size() == 1) return;
  std::vector<Step>& steps = plan.steps;
  const size_t n = steps.size(), nstreams = plan.streams.size();
  std::vector<int> producer(plan.slots.size(), -1);
  std::vector<bool> made_at_launch(plan.slots.size(), false);
  // waited[c][q]: the latest step of stream q that stream c has waited for.
  std::vector<std::vector<int>> waited(nstreams, std::vector<int>(nstreams, -1));
  std::vector<std::vector<std::pair<size_t, int>>> waits(n);  // (waiting stream, producer step)
  std::vector<int> event_after(n, -1);
  for (size_t i = 0; i < n; ++i) {
    // latest[c][q]: the latest step of stream q that stream c must wait for.
    std::map<size_t, std::vector<int>> latest;
    for (SlotId s : steps[i].reads()) {
      const int p = producer[s];
      if (p < 0 || made_at_launch[s]) continue;
      const size_t c = steps[i].reads_at_launch(s, plan.slots[s].memory) ? kHostStream : steps[i].stream;
      const size_t q = steps[p].stream;
      if (q == kHostStream || q == c) continue;
      auto& row = latest.try_emplace(c, nstreams, -1).first->second;
      row[q] = std::max(row[q], p);
    }
    for (auto& [c, row] : latest)
      for (size_t q = 0; q < nstreams; ++q) {
        if (row[q] < 0 || waited[c][q] >= row[q]) continue;
        waited[c][q] = row[q];
        waits[i].emplace_back(c, row[q]);
        if (event_after[row[q]] < 0) {
          event_after[row[q]] = static_cast<int>(plan.events.size());
          plan.events.push_back(q);
        }
      }
    for (SlotId s : steps[i].outputs)
      if (s != kNoSlot) {
        producer[s] = static_cast<int>(i);
        made_at_launch[s] = steps[i].writes_at_launch(s);
      }
  }
  std::vector<std::string> labels;
  for (const Step& st : steps) labels.push_back(st.label);
  std::vector<Step> ordered;
  std::vector<size_t> new_index(n);
  for (size_t i = 0; i < n; ++i) {
    for (auto [c, p] : waits[i]) {
      Step w;
      w.kind = StepKind::kWait;
      w.stream = c;
      w.event = event_after[p];
      w.label = "event " + std::to_string(w.event) + " (after " + labels[p] + ")";
      w.name = "wait " + w.label;
      w.op_type = "wait";
      ordered.push_back(std::move(w));
    }
    new_index[i] = ordered.size();
    ordered.push_back(std::move(steps[i]));
    if (event_after[i] >= 0) {
      Step r;
      r.kind = StepKind::kRecord;
      r.stream = ordered.back().stream;
      r.ep = ordered.back().ep;
      r.event = event_after[i];
      r.label = "event " + std::to_string(r.event);
      r.name = "record " + r.label;
      r.op_type = "record";
      ordered.push_back(std::move(r));
    }
  }
  Step barrier;
  barrier.kind = StepKind::kBarrier;
  barrier.label = "wait for every stream";
  barrier.name = "barrier";
  barrier.op_type = "barrier";
  ordered.push_back(std::move(barrier));
  steps = std::move(ordered);
  for (auto& [step, slot] : step_reads) step = new_index[step];
}

void extend_async_reads(const ExecutionPlan& plan, std::vector<int>& last_use) {
  const std::vector<Step>& steps = plan.steps;
  if (plan.streams.size() == 1) return;
  std::vector<std::set<size_t>> touching(plan.memories.size());
  for (const Step& st : steps) {
    for (SlotId s : st.reads()) touching[plan.slots[s].memory].insert(st.stream);
    for (SlotId s : st.outputs)
      if (s != kNoSlot) touching[plan.slots[s].memory].insert(st.stream);
  }
  std::vector<int> recorded_at(plan.events.size(), -1);
  for (size_t i = 0; i < steps.size(); ++i)
    if (steps[i].kind == StepKind::kRecord) recorded_at[steps[i].event] = static_cast<int>(i);
  auto host_knows_done = [&](size_t stream, size_t from) {
    for (size_t j = from + 1; j < steps.size(); ++j) {
      const Step& w = steps[j];
      if (w.kind == StepKind::kBarrier) return static_cast<int>(j);
      if (w.kind == StepKind::kWait && w.stream == kHostStream && plan.events[w.event] == stream &&
          recorded_at[w.event] > static_cast<int>(from))
        return static_cast<int>(j);
    }
    return static_cast<int>(steps.size() - 1);
  };
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& st = steps[i];
    if (st.stream == kHostStream) continue;
    for (SlotId s : st.reads()) {
      const size_t m = plan.slots[s].memory;
      if (touching[m].size() < 2 || st.reads_at_launch(s, m)) continue;
      last_use[s] = std::max(last_use[s], host_knows_done(st.stream, i));
    }
  }
}

}  // namespace loom::exec
