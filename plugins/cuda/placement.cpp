#include "placement.h"

#include <algorithm>
#include <map>
#include <set>

namespace loom::cuda {
namespace {

bool is_integer(int32_t dtype) {
  return dtype == LOOM_DTYPE_INT64 || dtype == LOOM_DTYPE_INT32 || dtype == LOOM_DTYPE_BOOL;
}

struct Use {
  size_t node;
  size_t input;
};

}  // namespace

std::vector<NodePlacement> place_nodes(const KernelTable& table, const sdk::Graph& graph) {
  const size_t n = graph.node_count();
  std::vector<NodePlacement> out(n);
  std::vector<bool> served(n, false);
  std::vector<std::vector<int>> host_inputs(n);
  std::map<std::string, std::vector<Use>> uses;
  std::set<std::string> graph_outputs;
  for (size_t i = 0; i < graph.output_count(); ++i) graph_outputs.insert(std::string(graph.output_name(i)));
  for (size_t i = 0; i < n; ++i) {
    sdk::Node node = graph.node(i);
    out[i].reason = table.why_not(node);
    served[i] = out[i].reason.empty();
    if (served[i]) host_inputs[i] = table.host_inputs(node);
    for (size_t k = 0; k < node.input_count(); ++k)
      if (!node.input_name(k).empty()) uses[std::string(node.input_name(k))].push_back({i, k});
  }
  // Shape arithmetic, found from the shape operands backwards: a node joins
  // when each of its results is read only on the host.
  std::vector<bool> on_host(n, false);
  auto read_on_host = [&](const Use& u) {
    if (on_host[u.node]) return true;
    if (!served[u.node]) return true;  // a host provider runs the reader
    const std::vector<int>& h = host_inputs[u.node];
    return std::find(h.begin(), h.end(), static_cast<int>(u.input)) != h.end();
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = n; i-- > 0;) {
      if (on_host[i] || !served[i]) continue;
      sdk::Node node = graph.node(i);
      if (node.op_type() == "Shape" || node.op_type() == "Size") continue;  // dims only: no device read
      bool all_host = node.output_count() > 0, any_use = false;
      for (size_t k = 0; k < node.output_count() && all_host; ++k) {
        const std::string name(node.output_name(k));
        if (name.empty()) continue;
        if (!is_integer(node.output_dtype(k))) all_host = false;
        auto it = uses.find(name);
        if (it != uses.end())
          for (const Use& u : it->second) {
            any_use = true;
            if (!read_on_host(u)) all_host = false;
          }
        // A graph output may be wanted on the device (IO binding): not a
        // shape operand.
        if (graph_outputs.count(name)) all_host = false;
      }
      // A node whose inputs include device data (a float tensor) is left
      // alone: the data would have to come to the host.
      for (size_t k = 0; k < node.input_count() && all_host; ++k)
        if (!node.input_name(k).empty() && !is_integer(node.input_dtype(k)) &&
            node.input_dtype(k) != LOOM_DTYPE_UNDEFINED)
          all_host = false;
      if (all_host && any_use) {
        on_host[i] = true;
        changed = true;
      }
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (!served[i]) continue;
    if (on_host[i]) {
      out[i].reason = "shape arithmetic: its integer result is only read on the host (as a shape operand), so it "
                      "stays with a host provider";
      continue;
    }
    out[i].claim = true;
    out[i].reason = "cuda kernel";
  }
  return out;
}

}  // namespace loom::cuda
