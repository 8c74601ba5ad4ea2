#include "session/static_limits.h"

#include "onnx/tensor_proto.h"

namespace loom::session {
namespace {

Status check_graph(const ir::Graph& graph, int64_t max_bytes) {
  for (const auto& node : graph.nodes()) {
    for (const std::string& out : node->outputs) {
      if (out.empty()) continue;
      const ir::ValueType* t = graph.type_of(out);
      if (t == nullptr || t->kind != ValueKind::kTensor || !t->fully_known()) continue;
      const size_t esize = dtype_size(t->dtype);
      if (esize == 0) continue;  // strings: sized by their contents, checked at run time
      auto count = checked_element_count(t->known_dims());
      const bool over = !count || static_cast<uint64_t>(*count) > static_cast<uint64_t>(max_bytes) / esize;
      if (over)
        return Status(StatusCode::kInvalidArgument,
                      "node " + node->label() + " makes '" + out + "' of static type " + t->to_string() +
                          ", over " + onnxio::describe_byte_limit("max_tensor_mb", max_bytes));
    }
    for (const ir::Attribute& a : node->attributes) {
      if (a.graph) LOOM_RETURN_IF_ERROR(check_graph(*a.graph, max_bytes));
      for (const auto& g : a.graphs) LOOM_RETURN_IF_ERROR(check_graph(*g, max_bytes));
    }
  }
  return Status::ok();
}

}  // namespace

Status check_static_tensor_sizes(const ir::Graph& graph, int64_t max_tensor_bytes) {
  if (max_tensor_bytes <= 0) return Status::ok();
  return check_graph(graph, max_tensor_bytes);
}

}  // namespace loom::session
