// The op registry Loom reads op meaning from: for each (domain, op,
// since-version) its ONNX-style schema (formals, type constraints,
// attributes) and one type-and-shape function.
//
// Two sources stand behind it: Debian's ONNX 1.12 library (ai.onnx up to
// opset 17, ai.onnx.ml up to 3), and Loom's own table (schema_table.h) for
// the ops and versions that library lacks (opsets 18 to 28: Attention,
// RMSNormalization, the Bitwise ops, ...). A lookup takes the newest
// version at or below the asked opset from either source, so a Loom entry
// shadows ONNX's older one from its since-version on.
//
// Every lookup in Loom goes through here (the loader's op check, schema
// verification, the shape-inference server, partition and plan), never
// through ::onnx::OpSchemaRegistry directly. Built once, on first use, and
// read-only afterwards: safe to share across threads.
#pragma once

#include <onnx/defs/schema.h>

#include <cstdint>
#include <string>
#include <vector>

#include "opreg/op_def.h"

namespace loom::opreg {

// ONNX's registry behind Loom's table, as an ONNX ISchemaRegistry (what
// ONNX's shape inference and Loom's custom-op registry take).
class OpRegistry final : public ::onnx::ISchemaRegistry {
 public:
  const ::onnx::OpSchema* GetSchema(const std::string& key, const int max_inclusive_version,
                                    const std::string& domain) const override;
};

// The process-wide registry.
const OpRegistry& op_registry();

// The schema serving `op_type` of `domain` ("" or "ai.onnx" for ONNX's
// default domain) at `opset`, or NULL when neither source knows the op.
const ::onnx::OpSchema* find_schema(const std::string& op_type, int64_t opset, const std::string& domain);

// True for a schema from Loom's own table (full schema checks apply to it
// at every opset it serves; see proto_structure.cpp).
bool is_loom_schema(const ::onnx::OpSchema* schema);

// Every schema of Loom's table, all versions.
std::vector<const ::onnx::OpSchema*> loom_schemas();

// Loom's form of an ONNX schema (plugin custom ops, which the registry's
// users declare as ONNX schemas for the inference server, come this way).
OpDef op_def_from_schema(const ::onnx::OpSchema& schema, OpSource source);

}  // namespace loom::opreg
