// Structure checks on a ModelProto's graph before anything reads it deeply:
// ONNX's own shape inference assumes what a well-formed graph guarantees
// (it crashes on a node reading a value nothing defines), so hostile models
// are refused here first, naming the node and value.
#pragma once

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <map>
#include <string>

#include "loom/status.h"

namespace loom::onnxio {

// Every non-empty node input names a graph input, an initializer or a node
// output of its graph, or (in a subgraph) a value of an enclosing graph;
// subgraphs nest at most `max_depth` levels.
Status check_value_definitions(const ::onnx::GraphProto& graph, int max_depth);

// Every node of an ONNX domain whose op `schemas` knows at the model's
// opset (`opsets`: domain -> version, "" for ONNX; models at an opset newer
// than ONNX's registry knows are not verified) passes the op schema's
// own verification (ONNX's checker: input/output counts, required,
// unknown and mistyped attributes) -- ONNX's inference functions assume it.
// Nodes of custom-op domains are left to the custom-op checks.
// False when ONNX 1.12's static inference is known to crash on the model
// (found by fuzzing; fuzz/regressions/model_loader): MaxUnpool with an
// input of unknown rank, convolutions whose declared data and weight ranks
// disagree or are below 3, convolutions and pools with non-positive
// strides, dilations or kernel sizes or negative pads -- in the graph or a
// subgraph. Such models skip
// ONNX's inference and are typed at run time (and refused by the kernels
// if really malformed).
bool safe_for_onnx_inference(const ::onnx::GraphProto& graph);

Status verify_onnx_nodes(const ::onnx::GraphProto& graph, const ::onnx::ISchemaRegistry& schemas,
                         const std::map<std::string, int64_t>& opsets);

}  // namespace loom::onnxio
