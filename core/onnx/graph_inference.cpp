#include "onnx/graph_inference.h"

#include "base/logging.h"
#include "ir/type_precision.h"
#include "opreg/onnx_inference/isolated_inference.h"
#include "onnx/model_loader.h"
#include "onnx/model_saver.h"
#include "opreg/infer/element_types.h"
#include "opreg/infer/shapes.h"

namespace loom::onnxio {

int infer_with_onnx(ir::Graph& graph, const std::string& model_name) {
  auto model = model_proto_for_inference(graph, kInferenceDataThreshold);
  if (!model) {
    log::logger()->debug("{}: ONNX's shape inference skipped: {}", model_name, model.status().message());
    return 0;
  }
  if (auto r = infer_shapes_isolated(*model, graph.op_schemas.get()); r.outcome != InferenceOutcome::kDone)
    log::logger()->debug("{}: ONNX's shape inference: {}", model_name, r.detail);
  int gained = 0;
  auto take = [&](const ::onnx::ValueInfoProto& vi) {
    if (!vi.has_type() || graph.is_initializer(vi.name())) return;
    const ir::ValueType now = value_type_from_proto(vi.type());
    auto it = graph.value_types.find(vi.name());
    if (it == graph.value_types.end()) {
      if (now.kind == ValueKind::kUnknown) return;
      graph.value_types[vi.name()] = now;
      ++gained;
    } else if (ir::more_precise(now, it->second)) {
      it->second = now;
      ++gained;
    }
  };
  for (const auto& vi : model->graph().value_info()) take(vi);
  for (const auto& vi : model->graph().output()) take(vi);
  return gained;
}

int infer_types(ir::Graph& graph, const std::string& model_name, bool ask_onnx) {
  int gained = opreg::infer_element_types(graph) + opreg::infer_shapes(graph);
  if (!ask_onnx || opreg::every_output_typed(graph)) return gained;
  if (const int from_onnx = infer_with_onnx(graph, model_name); from_onnx > 0)
    gained += from_onnx + opreg::infer_element_types(graph) + opreg::infer_shapes(graph);
  return gained;
}

}  // namespace loom::onnxio
