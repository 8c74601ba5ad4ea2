// Shape inference (basic): ONNX's type and shape inference runs once at
// load; rewrites can make more known (a Reshape target folded to a constant
// gives its output a rank, and everything after it). This pass re-runs
// ONNX inference on the current graph whenever another pass changed it since
// the last run, and records every type that became more precise: a rank
// where there was none, a dim value where there was a symbol or nothing.
// Then Loom's symbolic propagation (symbolic_shapes.h) names the dims ONNX
// leaves anonymous. Types never become less precise, so the pass converges.
#include <onnx/shape_inference/implementation.h>

#include "base/logging.h"
#include "onnx/model_loader.h"
#include "onnx/model_saver.h"
#include "onnx/op_schemas.h"
#include "onnx/proto_structure.h"
#include "transform/pass.h"
#include "transform/symbolic_shapes.h"
#include "transform/type_precision.h"

namespace loom::transform {
namespace {

// Initializers at least this big are given to inference by type only.
constexpr size_t kInferenceDataThreshold = 4096;

class ShapeInference : public Pass {
 public:
  std::string name() const override { return "shape_inference"; }
  OptimizationLevel level() const override { return OptimizationLevel::kBasic; }

  Status run(ir::Graph& graph, PassContext& ctx, bool* changed) override {
    if (ctx.graph_version == inferred_version_) return Status::ok();
    inferred_version_ = ctx.graph_version;
    auto model = onnxio::model_proto_for_inference(graph, kInferenceDataThreshold);
    if (!model) {
      log::logger()->debug("{}: shape inference skipped: {}", ctx.model_name, model.status().message());
      return Status::ok();
    }
    if (!onnxio::safe_for_onnx_inference(model->graph())) return Status::ok();
    try {
      ::onnx::ShapeInferenceOptions options{/*check_type=*/false, /*error_mode=*/0, /*enable_data_propagation=*/true};
      ::onnx::shape_inference::InferShapes(*model, onnxio::schema_registry_of(graph), options);
    } catch (const std::exception& e) {
      log::logger()->debug("{}: shape inference stopped early: {}", ctx.model_name, e.what());
    }
    int gained = 0;
    auto take = [&](const ::onnx::ValueInfoProto& vi) {
      if (!vi.has_type() || graph.is_initializer(vi.name())) return;
      const ir::ValueType now = onnxio::value_type_from_proto(vi.type());
      auto it = graph.value_types.find(vi.name());
      if (it == graph.value_types.end()) {
        if (now.kind == ValueKind::kUnknown) return;
        graph.value_types[vi.name()] = now;
        ++gained;
      } else if (more_precise(now, it->second)) {
        it->second = now;
        ++gained;
      }
    };
    for (const auto& vi : model->graph().value_info()) take(vi);
    for (const auto& vi : model->graph().output()) take(vi);
    gained += propagate_symbolic_shapes(graph);
    if (gained > 0) {
      log::logger()->debug("{}: shape inference made {} value type(s) more precise", ctx.model_name, gained);
      *changed = true;
    }
    return Status::ok();
  }

 private:
  uint64_t inferred_version_ = ~uint64_t{0};
};

}  // namespace

std::unique_ptr<Pass> make_shape_inference() { return std::make_unique<ShapeInference>(); }

}  // namespace loom::transform
