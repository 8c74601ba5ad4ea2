#include "loom/session.h"

#include <map>
#include <string>
#include <vector>

namespace loom {

namespace {

std::string counts(const std::map<std::string, int>& ops) {
  std::string s;
  for (const auto& [op, n] : ops) s += (s.empty() ? "" : ", ") + op + " x" + std::to_string(n);
  return s;
}

std::string by_provider(const std::vector<PlacementReport::ProviderSummary>& providers) {
  std::string s = "placement by provider:\n";
  for (const auto& p : providers)
    s += "  " + p.provider + ": " + std::to_string(p.node_count) + " node(s) (" + counts(p.op_types) + ")\n";
  return s;
}

}  // namespace

std::string PlacementReport::summary() const {
  std::string s = by_provider(providers);
  // A node's reason reads "<its kernel>; <why each earlier provider
  // declined>": the part after the first "; " is what held it back.
  std::map<std::string, std::map<std::string, std::map<std::string, int>>> held;  // provider -> why -> op -> n
  for (const NodePlacement& n : nodes) {
    const size_t cut = n.reason.find("; ");
    if (cut == std::string::npos) continue;
    held[n.provider][n.reason.substr(cut + 2)][(n.domain.empty() ? "" : n.domain + ".") + n.op_type]++;
  }
  for (const auto& [provider, reasons] : held) {
    s += "why nodes run on " + provider + ":\n";
    for (const auto& [why, ops] : reasons) s += "  " + why + ": " + counts(ops) + "\n";
  }
  return s;
}

std::string PlacementReport::to_string() const {
  std::string s = by_provider(providers);
  s += "nodes:\n";
  for (const NodePlacement& n : nodes)
    s += "  " + (n.node_name.empty() ? std::string("<unnamed>") : n.node_name) + " [" +
         (n.domain.empty() ? "" : n.domain + ".") + n.op_type + "] -> " + n.provider + ": " + n.reason + "\n";
  return s;
}

}  // namespace loom
