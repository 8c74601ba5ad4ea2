#include "exec/step_graph.h"

#include <algorithm>
#include <set>

#include "exec/execution_plan.h"

namespace loom::exec {

StepGraph build_step_graph(const ExecutionPlan& plan) {
  const std::vector<Step>& steps = plan.steps;
  const size_t n = steps.size();
  std::vector<std::set<size_t>> before(n);
  std::vector<int> producer(plan.slots.size(), -1);
  std::vector<int> last_on_stream(plan.streams.size(), -1);
  std::vector<int> record_of(plan.events.size(), -1);
  std::vector<size_t> pending_waits;  // waits placed before the next non-wait step
  for (size_t i = 0; i < n; ++i) {
    const Step& st = steps[i];
    auto depend = [&](int j) {
      if (j >= 0 && static_cast<size_t>(j) != i) before[i].insert(static_cast<size_t>(j));
    };
    if (st.kind == StepKind::kBarrier) {
      for (size_t j = 0; j < i; ++j) depend(static_cast<int>(j));
    } else if (st.kind == StepKind::kRecord) {
      depend(static_cast<int>(i) - 1);
      record_of[static_cast<size_t>(st.event)] = static_cast<int>(i);
    } else if (st.kind == StepKind::kWait) {
      depend(record_of[static_cast<size_t>(st.event)]);
    } else {
      for (SlotId s : st.reads()) depend(producer[s]);
      for (size_t w : pending_waits) depend(static_cast<int>(w));
      pending_waits.clear();
    }
    if (st.kind == StepKind::kWait) pending_waits.push_back(i);
    if (st.stream != kHostStream) {
      depend(last_on_stream[st.stream]);
      last_on_stream[st.stream] = static_cast<int>(i);
    }
    for (SlotId s : st.outputs)
      if (s != kNoSlot) producer[s] = static_cast<int>(i);
  }
  StepGraph g;
  g.dependency_count.assign(n, 0);
  g.successors.assign(n, {});
  for (size_t i = 0; i < n; ++i) {
    g.dependency_count[i] = static_cast<int>(before[i].size());
    for (size_t j : before[i]) g.successors[j].push_back(i);
    if (before[i].empty()) g.roots.push_back(i);
  }
  return g;
}

}  // namespace loom::exec
