// Shape inference (basic): ONNX's type and shape inference runs once at
// load; rewrites can make more known (a Reshape target folded to a constant
// gives its output a rank, and everything after it). This pass re-runs
// ONNX inference on the current graph whenever another pass changed it since
// the last run, and records every type that became more precise: a rank
// where there was none, a dim value where there was a symbol or nothing.
// Then Loom's symbolic propagation (symbolic_shapes.h) names the dims ONNX
// leaves anonymous. Types never become less precise, so the pass converges.
#include "base/logging.h"
#include "onnx/isolated_inference.h"
#include "onnx/model_loader.h"
#include "onnx/model_saver.h"
#include "transform/pass.h"
#include "transform/symbolic_shapes.h"
#include "transform/type_precision.h"

namespace loom::transform {
namespace {

class ShapeInference : public Pass {
 public:
  std::string name() const override { return "shape_inference"; }
  OptimizationLevel level() const override { return OptimizationLevel::kBasic; }

  Status run(ir::Graph& graph, PassContext& ctx, bool* changed) override {
    if (ctx.graph_version == inferred_version_) return Status::ok();
    inferred_version_ = ctx.graph_version;
    auto model = onnxio::model_proto_for_inference(graph, onnxio::kInferenceDataThreshold);
    if (!model) {
      log::logger()->debug("{}: shape inference skipped: {}", ctx.model_name, model.status().message());
      return Status::ok();
    }
    if (auto r = onnxio::infer_shapes_isolated(*model, graph.op_schemas.get());
        r.outcome != onnxio::InferenceOutcome::kDone)
      log::logger()->debug("{}: shape inference: {}", ctx.model_name, r.detail);
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
