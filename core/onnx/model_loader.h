// Loads an ONNX ModelProto (file or bytes) into the IR, runs ONNX's own type
// and shape inference, and checks every node's op against the ONNX schemas of
// its opset. Initializers with external data are read relative to the model's
// folder (locations escaping it are refused).
#pragma once

#include <memory>
#include <string>

#include <onnx/onnx_pb.h>

#include "ir/graph.h"
#include "loom/status.h"
#include "onnx/op_schemas.h"

namespace loom::onnxio {

struct LoadedModel {
  std::shared_ptr<ir::Graph> graph;
  std::string source;     // path or "<bytes>", for messages
  std::string model_dir;  // folder external data is resolved against
  int64_t ir_version = 0;
  std::string producer;
};

// `schemas`: the environment's custom-op schemas (NULL: ONNX's only). Nodes
// of a custom-op domain are checked against them (op known at the model's
// opset for the domain, arity, attributes, element types, the op's own
// shape inference) and the graph keeps them (ir::Graph::op_schemas).
Expected<LoadedModel> load_model_file(const std::string& path, std::shared_ptr<OpSchemas> schemas = nullptr);
Expected<LoadedModel> load_model_bytes(const std::string& bytes, const std::string& model_dir,
                                       const std::string& source, std::shared_ptr<OpSchemas> schemas = nullptr);

// A non-graph attribute (tensors read relative to `model_dir`).
Expected<ir::Attribute> attribute_from_proto(const ::onnx::AttributeProto& ap, const std::string& model_dir);

// True when ONNX's schema registry knows op_type in domain at opset
// (domains "", "ai.onnx.ml", "ai.onnx.preview.training").
bool is_known_onnx_op(const std::string& op_type, const std::string& domain, int64_t opset);
bool is_onnx_domain(const std::string& domain);

// The IR type of an ONNX TypeProto (kUnknown for kinds the IR does not model).
ir::ValueType value_type_from_proto(const ::onnx::TypeProto& t);

}  // namespace loom::onnxio
