// Loads an ONNX ModelProto (file or bytes) into the IR, runs ONNX's own type
// and shape inference, and checks every node's op against the ONNX schemas of
// its opset. Initializers with external data are read relative to the model's
// folder (locations escaping it are refused).
#pragma once

#include <memory>
#include <string>

#include <onnx/onnx_pb.h>

#include "ir/graph.h"
#include "loom/session.h"
#include "loom/status.h"
#include "onnx/op_schemas.h"

namespace loom::onnxio {

struct LoadedModel {
  std::shared_ptr<ir::Graph> graph;
  std::string source;     // path or "<bytes>", for messages
  std::string model_dir;  // folder external data is resolved against
  int64_t ir_version = 0;
  std::string producer;
  ModelMetadata metadata;  // the ModelProto's own fields
};

struct LoadOptions {
  // The environment's custom-op schemas (NULL: ONNX's only). Nodes of a
  // custom-op domain are checked against them (arity, attributes, element
  // types, the op's own shape inference) and the graph keeps them
  // (ir::Graph::op_schemas).
  std::shared_ptr<OpSchemas> schemas;
  // Limits (config "limits"; 0 = none), refused with kInvalidArgument
  // naming the limit: the model file (or bytes) plus the data of its
  // external tensors; nodes, subgraphs' included; any one tensor (checked
  // before it is allocated).
  int64_t max_model_bytes = 0;
  int64_t max_nodes = 0;
  int64_t max_tensor_bytes = 0;
  // Which type inference fills in what the file leaves out: ONNX's (in the
  // inference server) and the registry's in-process one (opreg/infer/).
  // Both by default; tests compare one with the other.
  bool onnx_inference = true;
  bool loom_inference = true;
};

Expected<LoadedModel> load_model_file(const std::string& path, const LoadOptions& options = {});
Expected<LoadedModel> load_model_bytes(const std::string& bytes, const std::string& model_dir,
                                       const std::string& source, const LoadOptions& options = {});

// A non-graph attribute (tensors read relative to `model_dir`, refused over
// `max_tensor_bytes` when > 0).
Expected<ir::Attribute> attribute_from_proto(const ::onnx::AttributeProto& ap, const std::string& model_dir,
                                             int64_t max_tensor_bytes = 0);

// True when ONNX's schema registry knows op_type in domain at opset
// (domains "", "ai.onnx.ml", "ai.onnx.preview.training").
bool is_known_onnx_op(const std::string& op_type, const std::string& domain, int64_t opset);
bool is_onnx_domain(const std::string& domain);

// The IR type of an ONNX TypeProto (kUnknown for kinds the IR does not model).
ir::ValueType value_type_from_proto(const ::onnx::TypeProto& t);

}  // namespace loom::onnxio
