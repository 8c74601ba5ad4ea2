#include "loom/session.h"

namespace loom {

std::string PlacementReport::to_string() const {
  std::string s = "placement by provider:\n";
  for (const ProviderSummary& p : providers) {
    s += "  " + p.provider + ": " + std::to_string(p.node_count) + " node(s)";
    std::string ops;
    for (const auto& [op, n] : p.op_types) ops += (ops.empty() ? "" : ", ") + op + " x" + std::to_string(n);
    s += " (" + ops + ")\n";
  }
  s += "nodes:\n";
  for (const NodePlacement& n : nodes)
    s += "  " + (n.node_name.empty() ? std::string("<unnamed>") : n.node_name) + " [" +
         (n.domain.empty() ? "" : n.domain + ".") + n.op_type + "] -> " + n.provider + ": " + n.reason + "\n";
  return s;
}

}  // namespace loom
