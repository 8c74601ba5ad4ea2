// What an op means, in Loom's own terms: the op registry's answer for one
// (domain, op, since-version). Formals with their options and type
// parameters, type constraints, attributes and arity.
//
// Everything downstream of the registry (the loader's node checks, kernel
// matching, output typing, plan rules) reads OpDefs; only the registry
// itself (core/opreg, and the shape-inference server it serves) sees ONNX's
// schema classes. An OpDef is immutable once made and lives as long as the
// process (ONNX and Loom ops) or the Environment that declared it (plugin
// custom ops, kept by onnxio::OpSchemas), so nodes hold plain pointers to
// theirs (ir::Node::op_def, bound at load).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ir/attribute.h"
#include "ir/value_type.h"
#include "loom/status.h"
#include "loom/tensor.h"

namespace loom::ir {
class Graph;
struct Node;
}  // namespace loom::ir

namespace loom::opreg {

enum class FormalOption { kSingle, kOptional, kVariadic };

struct FormalDef {
  std::string name;
  // A type parameter ("T") or a literal type string ("tensor(int64)").
  std::string type_str;
  FormalOption option = FormalOption::kSingle;
  bool homogeneous = true;  // variadic: every value of one type
  int min_arity = 1;        // variadic: values it takes at least
};

struct TypeConstraintDef {
  std::string param;
  std::vector<std::string> allowed;  // ONNX type strings: "tensor(float)", "seq(tensor(int64))", ...
};

struct AttributeDef {
  std::string name;
  ir::AttrType type = ir::AttrType::kUndefined;
  bool required = false;
};

// Where a definition comes from, which decides how strictly nodes are
// checked against it (see node_check.h).
enum class OpSource {
  kOnnx,    // Debian's ONNX library (ai.onnx up to opset 17, ai.onnx.ml up to 3)
  kLoom,    // Loom's table (schema_table.h): the newer ops and versions
  kContrib, // Loom's table: ONNX Runtime's com.microsoft ops, which grow without new versions
  kPlugin,  // a custom op declared by a plugin through the ABI
};

struct OpDef {
  std::string domain;  // "" for ai.onnx
  std::string name;
  int since_version = 1;
  bool deprecated = false;
  OpSource source = OpSource::kOnnx;
  std::string origin;  // the plugin that declared it (kPlugin), for messages
  int min_inputs = 0, max_inputs = 0, min_outputs = 0, max_outputs = 0;  // max INT32_MAX: variadic
  std::vector<FormalDef> inputs, outputs;
  std::vector<TypeConstraintDef> type_constraints;
  std::vector<AttributeDef> attributes;
  // Attributes outside `attributes` are accepted (ONNX's "unchecked
  // attributes", and plugin ops that only declared their arity).
  bool any_attributes = false;
  // The op's own type-and-shape function over Loom's IR, where its definer
  // gave one (a plugin's custom op): fills `outputs` (one per node output,
  // kind kUnknown where it says nothing) or returns the node's error. The
  // registry's shape rules (opreg/infer/shape_rules.h) serve the others.
  using InferFn = std::function<Status(const ir::Graph& graph, const ir::Node& node, std::vector<ir::ValueType>* outputs)>;
  InferFn infer;

  // The formal that input (output) position i binds to: a trailing
  // variadic formal serves every position from its own on. NULL past the
  // last formal.
  const FormalDef* input_formal(size_t i) const { return formal_at(inputs, i); }
  const FormalDef* output_formal(size_t i) const { return formal_at(outputs, i); }
  const TypeConstraintDef* constraint(const std::string& param) const;
  const AttributeDef* attribute(const std::string& attr_name) const;
  // "domain.name" ("ai.onnx.Relu" for the default domain), for messages.
  std::string qualified_name() const;

 private:
  static const FormalDef* formal_at(const std::vector<FormalDef>& formals, size_t i);
};

// The definition serving `op_type` of `domain` ("" or "ai.onnx" for ONNX's
// default domain) at `opset` from ONNX's library and Loom's table (the
// newest version at or below `opset` of either), or NULL when neither knows
// the op. Thread-safe; the result lives as long as the process.
const OpDef* find_op_def(const std::string& op_type, int64_t opset, const std::string& domain);

// Every definition the registry serves: each version of each op of both
// sources (a Loom version shadows none of ONNX's older ones), for listings.
std::vector<const OpDef*> all_op_defs();

// The newest opset of `domain` that Debian's ONNX library defines ops for
// (17 for ai.onnx); 0 for a domain it does not know. Ops of a model past it
// that Loom's table does not define are served by their last ONNX version.
int64_t last_onnx_library_opset(const std::string& domain);

// ONNX's type string ("tensor(float)") for a tensor element type, and back
// (kUndefined / "" when there is none).
std::string tensor_type_string(DType dtype);
DType dtype_from_type_string(const std::string& s);

}  // namespace loom::opreg
