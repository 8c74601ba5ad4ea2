// Model-local functions (ModelProto.functions, which recent exporters emit
// for modules kept as units): every node that calls one is replaced, in the
// proto, by the function's body, before anything else reads the graph.
// Values inside a body get names of their own per call ("<call>/<name>"),
// formal inputs and outputs become the call's, attributes a body node
// takes by ref_attr_name come from the call (or are left to the op's
// default when the call has none), and calls inside bodies, subgraphs
// included, are expanded in turn.
//
// Bounded: calls nested more than kMaxFunctionDepth deep (a function that
// calls itself, directly or not) and expansions past `max_nodes` nodes (or
// kDefaultMaxExpandedNodes when 0) are refused before anything is built
// (each function's expanded size is counted once), so a model of 61
// functions each calling the previous twice fails at once instead of
// expanding 2^61 times. FunctionProto.attribute_proto (default attribute
// values, IR 9) is not in the ONNX 1.12 schema Loom parses with: a
// referenced attribute the call leaves out takes the op's default.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>

#include "loom/status.h"

namespace loom::onnxio {

constexpr int kMaxFunctionDepth = 64;
constexpr int64_t kDefaultMaxExpandedNodes = int64_t{1} << 20;

// Expands every call of a model-local function in `model` and drops the
// functions. Refuses (kInvalidArgument / kNotImplemented, naming the call)
// a recursion, an expansion past the bound, a call with more inputs or
// outputs than the function declares, and a function importing another
// version of an opset than the model.
Status inline_local_functions(::onnx::ModelProto& model, int64_t max_nodes);

}  // namespace loom::onnxio
