// Plugin custom ops in ONNX's terms, for the two things that need them:
// ONNX's schema rules, which check a declared op once when its plugin adds
// it (OpSchemas::add), and ONNX's inference in the server process
// (isolated_inference.h), which sees custom ops through a schema registry
// that serves them before the op registry's. Everything else reads the
// op's OpDef.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "loom/status.h"
#include "opreg/op_def.h"

namespace onnx {
class ISchemaRegistry;
class OpSchema;
}  // namespace onnx

namespace loom::onnxio {

struct CustomOpSchema;

struct CustomOpDefinition {
  std::shared_ptr<const ::onnx::OpSchema> onnx;  // its inference calls the op's own (CustomOpSchema::infer)
  opreg::OpDef def;                              // source kPlugin
};

// `op` as ONNX's schema rules accept it, or the reason they refuse it
// (naming the op). `op` must outlive the result: the ONNX schema's
// inference function reads it.
Expected<CustomOpDefinition> define_custom_op(const CustomOpSchema& op);

// A schema registry serving `custom(op_type, max_version, domain)` where it
// is not NULL, else the op registry's schemas.
using CustomSchemaLookup = std::function<const ::onnx::OpSchema*(const std::string& op_type, int max_version,
                                                                 const std::string& domain)>;
std::shared_ptr<const ::onnx::ISchemaRegistry> onnx_schema_view(CustomSchemaLookup custom);

}  // namespace loom::onnxio
