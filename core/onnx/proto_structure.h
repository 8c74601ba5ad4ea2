// Structure checks on a ModelProto's graph before anything reads it deeply:
// a model reading values nothing defines, or whose nodes do not match their
// op's schema, is refused here with a message naming the node and value
// (rather than left to fail somewhere obscure later). ONNX's own inference,
// which assumes a well-formed graph, runs in a child process anyway
// (isolated_inference.h).
#pragma once

#include <onnx/onnx_pb.h>

#include <map>
#include <string>

#include "loom/status.h"

namespace loom::onnxio {

// Every non-empty node input names a graph input, an initializer or a node
// output of its graph, or (in a subgraph) a value of an enclosing graph;
// subgraphs nest at most `max_depth` levels; If branches return the
// node's outputs, in the types the model declares for them.
Status check_value_definitions(const ::onnx::GraphProto& graph, int max_depth);

class OpSchemas;

// Every node of an ONNX domain whose op the registry (with `schemas`' custom
// ops, when not NULL) defines at the model's opset (`opsets`: domain ->
// version, "" for ONNX) matches its definition (node_check.h: input and
// output counts, omitted single values, required, unknown and mistyped
// attributes; at opsets past Debian's ONNX library, where an op Loom's
// table does not define is served by its last library version, only what
// later versions keep). Nodes of custom-op domains are left to the
// custom-op checks.
Status verify_onnx_nodes(const ::onnx::GraphProto& graph, const OpSchemas* schemas,
                         const std::map<std::string, int64_t>& opsets);

}  // namespace loom::onnxio
