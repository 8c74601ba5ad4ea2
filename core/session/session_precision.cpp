// The element types of a session's compute (transform/float16_conversion.h):
// Session::Impl::convert_precision, called by prepare (session.cpp).
#include "base/logging.h"
#include "session/fusion_gate.h"
#include "session/session_impl.h"
#include "transform/passes/float16_conversion.h"

namespace loom {

// Element types of the compute (transform/float16_conversion.h), asked of
// a fresh trial placement of the graph. `to_float16` (config "precision":
// "fp16", after the fusions): a node goes to float16 only when the EP that
// would run it in float32 also runs its float16 version. Otherwise (before
// the fusions): float16 compute that would not run on the first provider
// moves to float32 (FusionGate::moves_up), so a float16 model on the CPU
// runs on cpu_onednn rather than on the reference EP, as ONNX Runtime casts
// for its CPU EP.
Status Session::Impl::convert_precision(const partition::PartitionInputs& gate_inputs, bool to_float16) {
  using Convert = Expected<transform::Float16Report> (*)(ir::Graph&, const transform::Float16Accept&);
  auto pass = [&](Convert convert, bool upward, const std::string& what) -> Status {
    session::FusionGate gate(gate_inputs);
    auto report = convert(*graph, [&gate, upward](const ir::Graph& g, const std::vector<ir::NodeId>& original,
                                                  const ir::Node& changed,
                                                  const std::map<std::string, ir::ValueType>& staged,
                                                  const std::map<std::string, Tensor>& constants) {
      return upward ? gate.moves_up(g, original, changed, staged, constants)
                    : gate.accept(g, original, changed, staged, constants);
    });
    if (!report) return report.status().with_context(model_name + ": " + what);
    if (report->nodes_converted > 0)
      log::write(spdlog::level::info, model_name + ": " + what + ": " + std::to_string(report->nodes_converted) +
                                          " nodes converted, " + std::to_string(report->nodes_kept) + " kept, " +
                                          std::to_string(report->casts_added) + " casts, " +
                                          std::to_string(report->initializers_converted) + " constants converted");
    return Status::ok();
  };
  if (to_float16) return pass(transform::convert_to_float16, false, "precision fp16 (float32 compute in float16)");
  return pass(transform::compute_float16_in_float32, true, "float16 compute in float32 on a faster provider");
}

}  // namespace loom
