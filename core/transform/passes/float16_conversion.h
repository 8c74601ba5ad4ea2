// Float16 conversion (config "precision": "fp16"): runs the float32 compute
// of a model's top-level graph in float16, the way ONNX Runtime's float16
// converter with keep_io_types does it to a model file, but at session
// creation and only where an EP will run the float16 node.
//
// A node is converted when its op is listed in transform/float16_ops.h,
// every input and output bound to T is a float32 tensor, at least one of them
// is not a small constant-sized tensor (shape arithmetic on floats, such as
// a scale computed for a Resize, keeps float32), and `accept` agrees (the
// session asks whether the EP that would run the float32 node also runs the
// float16 one, so nothing moves to a slower EP). Then:
//   - its T outputs get new float16 values; a Cast back to float32 keeps the
//     old name for readers that stay float32, graph outputs and subgraphs;
//   - a float32 initializer read only by converted nodes is stored as
//     float16 (values beyond float16's range saturate at +-65504);
//   - any other float32 value it reads (a graph input, an unconverted
//     node's output) passes through one shared Cast to float16.
// Graph inputs and outputs keep their names and float32 types.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace loom::transform {

struct Float16Report {
  int64_t nodes_converted = 0;
  int64_t nodes_kept = 0;  // listed ops with float32 T values that stay float32 (declined or too small)
  int64_t casts_added = 0;
  int64_t initializers_converted = 0;
};

// Whether `half` (the float16 version of the node `original`, reading and
// making the values typed in `staged` and the constants in
// `staged_initializers`) may replace it. Same shape as
// PassContext::accept_fusion.
using Float16Accept =
    std::function<bool(const ir::Graph& graph, const std::vector<ir::NodeId>& original, const ir::Node& half,
                       const std::map<std::string, ir::ValueType>& staged,
                       const std::map<std::string, Tensor>& staged_initializers)>;

// Converts `graph` in place (an empty `accept` accepts every node). On error
// the graph is unchanged.
Expected<Float16Report> convert_to_float16(ir::Graph& graph, const Float16Accept& accept);

// The other way, as ONNX Runtime's InsertCastTransformer does for its CPU
// EP: the float16 compute of the same ops moves to float32, with Casts at its
// edges, where `accept` says so (the session: where a higher-priority EP runs
// the float32 node than would run the float16 one, so a float16 model runs
// on cpu_onednn in float32 instead of on the reference EP). Constants are
// widened exactly; the report counts the same way.
Expected<Float16Report> compute_float16_in_float32(ir::Graph& graph, const Float16Accept& accept);

}  // namespace loom::transform
