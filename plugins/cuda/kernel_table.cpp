#include "kernel_table.h"

#include <algorithm>
#include <set>

namespace loom::cuda {

const KernelTable::Rule* KernelTable::find(const sdk::Node& node, std::string* why) const {
  const std::string op = (node.domain().empty() ? "" : std::string(node.domain()) + ".") + std::string(node.op_type());
  const int64_t opset = node.opset();
  bool op_seen = false;
  std::string type_reason;
  const Rule* best = nullptr;
  for (const Rule& r : rules_) {
    if (r.domain != node.domain() || r.op != node.op_type()) continue;
    op_seen = true;
    if (opset < r.since || opset > r.end) continue;
    if (!r.dtypes.empty() && static_cast<size_t>(r.typed_input) < node.input_count()) {
      const int32_t d = node.input_dtype(static_cast<size_t>(r.typed_input));
      if (d != LOOM_DTYPE_UNDEFINED && std::find(r.dtypes.begin(), r.dtypes.end(), d) == r.dtypes.end()) {
        type_reason = "no cuda kernel for " + op + " on " + sdk::dtype_name(d);
        continue;
      }
    }
    if (best == nullptr || r.since > best->since) best = &r;
  }
  if (best == nullptr && why != nullptr) {
    if (!op_seen) *why = "no cuda kernel for " + op;
    else if (!type_reason.empty()) *why = type_reason;
    else *why = "no cuda kernel for " + op + " at opset " + std::to_string(opset);
  }
  return best;
}

std::string KernelTable::why_not(const sdk::Node& node) const {
  std::string why;
  const Rule* r = find(node, &why);
  if (r == nullptr) return why;
  if (r->check != nullptr) return r->check(node);
  return {};
}

std::vector<int> KernelTable::host_inputs(const sdk::Node& node) const {
  const Rule* r = find(node, nullptr);
  return r != nullptr ? r->host_inputs : std::vector<int>{};
}

std::vector<std::string> KernelTable::ops() const {
  std::set<std::string> names;
  for (const Rule& r : rules_) names.insert((r.domain.empty() ? "" : r.domain + ".") + r.op);
  return std::vector<std::string>(names.begin(), names.end());
}

}  // namespace loom::cuda
