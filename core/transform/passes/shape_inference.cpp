// Shape inference (basic): types are inferred at load; rewrites can make
// more known (a Reshape target folded to a constant gives its output a
// rank, and everything after it). This pass re-runs inference on the
// current graph whenever another pass changed it since the last run and
// records every type that became more precise: a rank where there was none,
// a dim value where there was a symbol or nothing. The registry's
// in-process inference (opreg/infer/) runs first; ONNX's, in its server,
// only when that leaves a node output without an element type or rank,
// and the in-process one then again on what it added. Types never become
// less precise, so the pass converges.
#include "base/logging.h"
#include "onnx/graph_inference.h"
#include "transform/passes/passes.h"

namespace loom::transform {
namespace {

class ShapeInference : public Pass {
 public:
  std::string name() const override { return "shape_inference"; }
  OptimizationLevel level() const override { return OptimizationLevel::kBasic; }

  Status run(ir::Graph& graph, PassContext& ctx, bool* changed) override {
    if (ctx.graph_version == inferred_version_) return Status::ok();
    inferred_version_ = ctx.graph_version;
    // In process first; ONNX's server only for what that leaves untyped.
    const int gained = onnxio::infer_types(graph, ctx.model_name, /*ask_onnx=*/true);
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
