// The op schemas a model is checked and inferred against: ONNX's own plus
// the custom-op domains that loaded plugins declare. Built once per
// Environment (read-only afterwards, so sessions share it across threads)
// and carried by every graph loaded through it (ir::Graph::op_schemas), so
// shape inference, kernel matching and output typing see custom ops like
// ONNX ops.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <onnx/defs/schema.h>

#include "ir/graph.h"
#include "loom/status.h"

namespace loom::onnxio {

// A custom op as the host keeps it, read from a plugin's LOOM_CustomOpSchema.
struct CustomOpSchema {
  std::string domain;
  std::string op_type;
  int since_version = 1;
  std::string library;  // the plugin that declared it, for messages
  int min_inputs = 0, max_inputs = 0, min_outputs = 0, max_outputs = 0;  // max -1: variadic
  // True when the plugin wrote the 0.2 fields: formals, type constraints and
  // attributes are then complete, and nodes are checked against them.
  bool declared = false;
  struct Formal {
    std::string name;
    std::string type_param;  // empty: any element type
    int32_t option = 0;      // LOOM_FORMAL_*
  };
  std::vector<Formal> inputs, outputs;
  std::map<std::string, std::vector<int32_t>> type_constraints;  // param -> LOOM_DTYPE_*
  struct Attribute {
    std::string name;
    int32_t type = 0;  // LOOM_ATTR_*
    bool required = false;
  };
  std::vector<Attribute> attributes;
  // The plugin's shape inference for `node` of `graph`: fills output types
  // (ir::ValueType, kind kUnknown where it says nothing) or returns its
  // error. Empty for dynamic shapes.
  std::function<Status(const ir::Graph& graph, const ir::Node& node, std::vector<ir::ValueType>* outputs)> infer;

  std::string qualified_name() const { return domain + "." + op_type; }
};

class InferenceServer;

class OpSchemas final : public ::onnx::ISchemaRegistry {
 public:
  OpSchemas();
  ~OpSchemas() override;

  // Adds a custom op; refuses one that ONNX's schema rules reject or that
  // repeats (domain, op, since_version), naming the op.
  Status add(CustomOpSchema op);

  // ISchemaRegistry, for ONNX's shape inference: the custom op of `domain`
  // with the highest since_version <= max_inclusive_version, else the op
  // registry's (opreg/op_registry.h).
  const ::onnx::OpSchema* GetSchema(const std::string& key, const int max_inclusive_version,
                                    const std::string& domain) const override;

  const ::onnx::OpSchema* find(const std::string& op_type, int64_t opset, const std::string& domain) const;
  // The custom op serving op_type of `domain` at `opset`, or NULL.
  const CustomOpSchema* custom_op(const std::string& op_type, int64_t opset, const std::string& domain) const;
  bool has_custom_domain(const std::string& domain) const;
  // Ops of a custom domain ("A, B@2"), for messages.
  std::string describe_domain(const std::string& domain) const;
  bool empty() const { return ops_.empty(); }
  // The process that runs ONNX's inference with these schemas
  // (isolated_inference.h), started on the first request: add() every op
  // before loading the first model.
  InferenceServer& inference_server() const;

 private:
  struct Entry {
    std::unique_ptr<CustomOpSchema> op;
    std::unique_ptr<::onnx::OpSchema> onnx;
  };
  const Entry* entry(const std::string& op_type, int64_t opset, const std::string& domain) const;
  // (domain, op_type) -> versions, ascending since_version.
  std::map<std::pair<std::string, std::string>, std::vector<Entry>> ops_;
  std::unique_ptr<InferenceServer> server_;
};

// The schema of `node` as `graph` sees it (its op_schemas, or the op registry's).
const ::onnx::OpSchema* schema_of(const ir::Graph& graph, const ir::Node& node);

// ONNX's type string ("tensor(float)") for a LOOM_DTYPE_* value, and back
// (kUndefined / "" when there is none).
std::string onnx_type_string(DType dtype);
DType dtype_from_onnx_type_string(const std::string& s);

}  // namespace loom::onnxio
