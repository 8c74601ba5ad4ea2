#include <cstring>

#include "plugin_host/abi_objects.h"

namespace loom::plugin_host {

const LOOM_MemoryInfo& host_memory() {
  static const LOOM_MemoryInfo m{LOOM_MemoryInfo_STRUCT_SIZE, nullptr, {"cpu", 3}, 0, 1};
  return m;
}

bool same_memory(const LOOM_MemoryInfo& a, const LOOM_MemoryInfo& b) {
  return a.device_id == b.device_id && a.name.size == b.name.size &&
         (a.name.size == 0 || std::memcmp(a.name.data, b.name.data, a.name.size) == 0);
}

std::string memory_name(const LOOM_MemoryInfo& m) {
  std::string n(m.name.data ? m.name.data : "", m.name.size);
  return m.device_id ? n + ":" + std::to_string(m.device_id) : n;
}

std::unique_ptr<LOOM_Tensor> view_of(const Tensor& t) {
  auto v = std::make_unique<LOOM_Tensor>();
  v->dtype = static_cast<int32_t>(t.dtype());
  v->dims = t.dims();
  v->count = static_cast<uint64_t>(t.element_count());
  v->memory = &host_memory();
  if (t.is_string())
    v->strings = const_cast<std::vector<std::string>*>(&t.strings());
  else
    v->data = const_cast<void*>(t.data());
  return v;
}

namespace {

std::unique_ptr<LOOM_NodeView> make_node_view(const ir::Graph& graph, const ir::Node& node) {
  auto v = std::make_unique<LOOM_NodeView>();
  v->node = &node;
  v->graph = &graph;
  for (const std::string& in : node.inputs) {
    const ir::ValueType* t = in.empty() ? nullptr : graph.type_of(in);
    if (t && t->has_shape) {
      v->input_ranks.push_back(static_cast<int64_t>(t->dims.size()));
      v->input_dims.push_back(t->known_dims());
    } else {
      v->input_ranks.push_back(-1);
      v->input_dims.emplace_back();
    }
    // Overridable initializers are inputs to the EPs: a run may give others.
    const Tensor* c = graph.constant_in_scope(in);
    v->input_constants.push_back(c ? view_of(*c) : nullptr);
  }
  for (const ir::Attribute& a : node.attributes) {
    if (a.tensor) v->attr_tensors[a.name] = view_of(*a.tensor);
    if (a.graph) v->attr_graphs[a.name] = make_full_view(*a.graph);
  }
  return v;
}

}  // namespace

std::unique_ptr<LOOM_GraphView> make_graph_view(const ir::Graph& graph, const std::vector<const ir::Node*>& nodes,
                                                std::vector<std::string> inputs, std::vector<std::string> outputs) {
  auto v = std::make_unique<LOOM_GraphView>();
  v->graph = &graph;
  for (const ir::Node* n : nodes) v->nodes.push_back(make_node_view(graph, *n));
  v->inputs = std::move(inputs);
  v->outputs = std::move(outputs);
  return v;
}

void forget_constant_bytes(LOOM_GraphView& view, const std::string& name) {
  for (const auto& n : view.nodes)
    for (size_t k = 0; k < n->node->inputs.size() && k < n->input_constants.size(); ++k)
      if (n->node->inputs[k] == name && n->input_constants[k] != nullptr) n->input_constants[k]->data = nullptr;
}

std::unique_ptr<LOOM_GraphView> make_full_view(const ir::Graph& graph) {
  std::vector<const ir::Node*> nodes;
  for (const auto& n : graph.nodes()) nodes.push_back(n.get());
  return make_graph_view(graph, nodes, graph.inputs, graph.outputs);
}

Status from_abi(LOOM_Status* s) {
  if (s == nullptr) return Status::ok();
  Status out(static_cast<StatusCode>(s->code >= 1 && s->code <= 6 ? s->code : 1), s->message);
  delete s;
  return out;
}

LOOM_Status* to_abi(const Status& s) {
  if (s.is_ok()) return nullptr;
  return new LOOM_Status{static_cast<int32_t>(s.code()), s.message()};
}

}  // namespace loom::plugin_host
