// ONNX's inference (in the inference server: isolated_inference.h) run on
// an IR graph and merged back into it: the graph is written as a model
// (large initializers by type only), inferred, and every value type that
// comes back more precise than the graph's is taken (top level only).
// Used where the registry's in-process inference (opreg/infer/) leaves a
// value untyped: at load, and by the shape-inference pass after rewrites.
#pragma once

#include <string>

#include "ir/graph.h"

namespace loom::onnxio {

// Returns how many value types became more precise; failures of the server
// only mean nothing is gained (logged at debug level, naming `model_name`).
int infer_with_onnx(ir::Graph& graph, const std::string& model_name);

// Types `graph` as Loom does after load and after rewrites: the registry's
// in-process inference (element types, then shapes); then, when `ask_onnx`
// and a node output is left without element type or rank, ONNX's
// (infer_with_onnx), and the in-process one again on what it added.
// Returns how many value types became more precise.
int infer_types(ir::Graph& graph, const std::string& model_name, bool ask_onnx);

}  // namespace loom::onnxio
