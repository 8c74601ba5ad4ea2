// The op definitions a model is checked and inferred against: the op
// registry's (opreg/op_def.h) plus the custom-op domains that loaded
// plugins declare. Built once per Environment (read-only afterwards, so
// sessions share it across threads) and carried by every graph loaded
// through it (ir::Graph::op_schemas), so node checks, shape inference,
// kernel matching and output typing see custom ops like ONNX ops.
//
// Nodes are bound to their definitions once, at load (bind_op_defs);
// everything after reads ir::Node::op_def through op_def_of. ONNX's schema
// classes stay behind this header: the inference server reads the custom
// ops as ONNX schemas through onnx_registry().
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "loom/status.h"
#include "opreg/op_def.h"

namespace onnx {
class ISchemaRegistry;
class OpSchema;
}  // namespace onnx

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

class OpSchemas final {
 public:
  OpSchemas();
  ~OpSchemas();
  OpSchemas(const OpSchemas&) = delete;
  OpSchemas& operator=(const OpSchemas&) = delete;

  // Adds a custom op; refuses one that ONNX's schema rules reject or that
  // repeats (domain, op, since_version), naming the op.
  Status add(CustomOpSchema op);

  // The definition serving op_type of `domain` at `opset`: the custom op
  // with the highest since_version <= opset, else the op registry's.
  const opreg::OpDef* find_def(const std::string& op_type, int64_t opset, const std::string& domain) const;
  // The same as ONNX schemas, for ONNX's shape inference (the inference
  // server and the loader's use of it).
  const ::onnx::ISchemaRegistry& onnx_registry() const;
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
  struct Entry;
  const Entry* entry(const std::string& op_type, int64_t opset, const std::string& domain) const;
  // (domain, op_type) -> versions, ascending since_version.
  std::map<std::pair<std::string, std::string>, std::vector<std::unique_ptr<Entry>>> ops_;
  std::shared_ptr<const ::onnx::ISchemaRegistry> onnx_view_;  // custom ops, then the registry's
  std::unique_ptr<InferenceServer> server_;
};

// The definition `graph` serves `node` at `opset` by: its custom ops', else
// the op registry's; NULL when neither knows the op.
const opreg::OpDef* lookup_op_def(const ir::Graph& graph, const ir::Node& node);

// Binds every node of `graph` and of its subgraphs that has no definition
// yet to its definition (lookup_op_def; ops nobody defines, such as
// ONNX Runtime's com.microsoft contrib ops, stay unbound). The loader calls
// it once; passes that add nodes call it for theirs.
void bind_op_defs(ir::Graph& graph);

// `node`'s definition: the one bound at load, else a lookup (a node a pass
// made since).
const opreg::OpDef* op_def_of(const ir::Graph& graph, const ir::Node& node);

}  // namespace loom::onnxio
