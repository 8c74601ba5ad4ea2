#include "opreg/onnx_inference/custom_op_schemas.h"

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include <algorithm>

#include "loom/plugin_api.h"
#include "onnx/model_loader.h"
#include "onnx/op_schemas.h"
#include "onnx/tensor_proto.h"
#include "opreg/op_registry.h"

namespace loom::onnxio {
namespace {

// Constant inputs at most this big are given to a custom op's shape
// inference as data (shape-like inputs); larger ones by type only.
constexpr size_t kInferenceConstantBytes = 1 << 20;

// One-node graph standing for the node ONNX's inference is looking at:
// synthetic value names, the inputs' types and small constant data, and the
// attributes the schema declares.
ir::Node& stand_in_node(const CustomOpSchema& op, ::onnx::InferenceContext& ctx, ir::Graph& g) {
  ir::Node n;
  n.name = op.op_type;
  n.op_type = op.op_type;
  n.domain = op.domain;
  n.opset = op.since_version;
  g.opsets[op.domain] = op.since_version;
  for (size_t i = 0; i < ctx.getNumInputs(); ++i) {
    const std::string name = "input" + std::to_string(i);
    n.inputs.push_back(name);
    if (const ::onnx::TypeProto* t = ctx.getInputType(i)) g.value_types[name] = value_type_from_proto(*t);
    const ::onnx::TensorProto* data = ctx.getInputData(i);
    if (data != nullptr && static_cast<size_t>(data->ByteSizeLong()) <= kInferenceConstantBytes)
      if (auto t = tensor_from_proto(*data, ""); t) g.initializers.emplace(name, std::move(*t));
  }
  for (size_t j = 0; j < ctx.getNumOutputs(); ++j) n.outputs.push_back("output" + std::to_string(j));
  for (const CustomOpSchema::Attribute& a : op.attributes)
    if (const ::onnx::AttributeProto* p = ctx.getAttribute(a.name))
      if (auto attr = attribute_from_proto(*p, ""); attr) n.attributes.push_back(std::move(*attr));
  return g.add_node(std::move(n));
}

void write_output_type(const ir::ValueType& vt, ::onnx::TypeProto* out) {
  auto* tt = out->mutable_tensor_type();
  if (vt.dtype != DType::kUndefined) tt->set_elem_type(static_cast<int32_t>(vt.dtype));
  if (!vt.has_shape) return;
  auto* shape = tt->mutable_shape();
  shape->clear_dim();
  for (const DimInfo& d : vt.dims) {
    auto* dim = shape->add_dim();
    if (d.value >= 0) dim->set_dim_value(d.value);
    else if (!d.symbol.empty()) dim->set_dim_param(d.symbol);
  }
}

// The element type the type constraints give output j when the plugin's
// inference (or its absence) left it open: the only allowed type, or the
// type of an input bound to the same parameter.
DType constrained_output_type(const CustomOpSchema& op, size_t j, ::onnx::InferenceContext& ctx) {
  if (op.outputs.empty()) return DType::kUndefined;
  const std::string& param = op.outputs[std::min(j, op.outputs.size() - 1)].type_param;
  if (param.empty()) return DType::kUndefined;
  auto c = op.type_constraints.find(param);
  if (c != op.type_constraints.end() && c->second.size() == 1) return static_cast<DType>(c->second[0]);
  for (size_t i = 0; i < ctx.getNumInputs() && !op.inputs.empty(); ++i) {
    if (op.inputs[std::min(i, op.inputs.size() - 1)].type_param != param) continue;
    const ::onnx::TypeProto* t = ctx.getInputType(i);
    if (t != nullptr && t->has_tensor_type() && t->tensor_type().elem_type() != 0)
      return static_cast<DType>(t->tensor_type().elem_type());
  }
  return DType::kUndefined;
}

void infer_custom_op(const CustomOpSchema& op, ::onnx::InferenceContext& ctx) {
  std::vector<ir::ValueType> outputs(ctx.getNumOutputs());
  for (ir::ValueType& vt : outputs) vt.kind = ValueKind::kUnknown;
  if (op.infer) {
    ir::Graph g;
    const ir::Node& node = stand_in_node(op, ctx, g);
    // A failing inference leaves the outputs unknown here; the loader's
    // node check runs it again on the real node and reports the error.
    if (!op.infer(g, node, &outputs)) return;
  }
  for (size_t j = 0; j < outputs.size(); ++j) {
    ir::ValueType vt = outputs[j];
    if (vt.dtype == DType::kUndefined) vt.dtype = constrained_output_type(op, j, ctx);
    if (vt.dtype == DType::kUndefined && !vt.has_shape) continue;
    write_output_type(vt, ctx.getOutputType(j));
  }
}

// ONNX's form of a formal list. Formals without a type parameter (and every
// formal of an op that only declared its arity) get a parameter of their
// own that allows every tensor type.
void add_formals(::onnx::OpSchema& s, const CustomOpSchema& op, bool inputs) {
  std::vector<CustomOpSchema::Formal> formals = inputs ? op.inputs : op.outputs;
  const char* prefix = inputs ? "input" : "output";
  if (!op.declared) {
    const int min = inputs ? op.min_inputs : op.min_outputs;
    const int max = inputs ? op.max_inputs : op.max_outputs;
    for (int k = 0; k < std::max(min, max); ++k)
      formals.push_back({prefix + std::to_string(k), "", k < min ? LOOM_FORMAL_SINGLE : LOOM_FORMAL_OPTIONAL});
    if (max < 0) formals.push_back({std::string(prefix) + "s", "", LOOM_FORMAL_VARIADIC});
  }
  for (size_t k = 0; k < formals.size(); ++k) {
    const CustomOpSchema::Formal& f = formals[k];
    std::string param = f.type_param;
    if (param.empty()) {
      param = std::string("T_") + prefix + std::to_string(k);
      s.TypeConstraint(param, ::onnx::OpSchema::all_tensor_types_with_bfloat(), "any tensor type");
    }
    const auto option = f.option == LOOM_FORMAL_OPTIONAL   ? ::onnx::OpSchema::Optional
                        : f.option == LOOM_FORMAL_VARIADIC ? ::onnx::OpSchema::Variadic
                                                           : ::onnx::OpSchema::Single;
    // A variadic formal of an arity-only op may take values of mixed types
    // and none at all (min 0 when the op's minimum is already reached).
    const bool homogeneous = op.declared;
    const int min_arity = op.declared ? 1 : 0;
    if (inputs)
      s.Input(static_cast<int>(k), f.name, "", param, option, homogeneous, min_arity);
    else
      s.Output(static_cast<int>(k), f.name, "", param, option, homogeneous, min_arity);
  }
}


class SchemaView final : public ::onnx::ISchemaRegistry {
 public:
  explicit SchemaView(CustomSchemaLookup custom) : custom_(std::move(custom)) {}
  const ::onnx::OpSchema* GetSchema(const std::string& key, const int max_inclusive_version,
                                    const std::string& domain) const override {
    if (const ::onnx::OpSchema* s = custom_(key, max_inclusive_version, domain)) return s;
    return opreg::find_schema(key, max_inclusive_version, domain);
  }

 private:
  CustomSchemaLookup custom_;
};

}  // namespace

Expected<CustomOpDefinition> define_custom_op(const CustomOpSchema& c) {
  const std::string what = "custom op " + c.qualified_name() + " (since " + std::to_string(c.since_version) + ")";
  try {
    auto s = std::make_shared<::onnx::OpSchema>(c.op_type, c.library, 0);
    s->SetDomain(c.domain).SinceVersion(c.since_version);
    for (const auto& [param, dtypes] : c.type_constraints) {
      std::vector<std::string> allowed;
      for (int32_t d : dtypes) {
        const std::string t = opreg::tensor_type_string(static_cast<DType>(d));
        if (t.empty()) return invalid_argument(what + ": type parameter " + param + " allows unknown dtype " + std::to_string(d));
        allowed.push_back(t);
      }
      s->TypeConstraint(param, allowed, "");
    }
    add_formals(*s, c, true);
    add_formals(*s, c, false);
    if (c.declared) {
      for (const CustomOpSchema::Attribute& a : c.attributes)
        s->Attr(a.name, "", static_cast<::onnx::AttributeProto::AttributeType>(a.type), a.required);
    } else {
      s->AllowUncheckedAttributes();
    }
    const CustomOpSchema* raw = &c;
    s->TypeAndShapeInferenceFunction([raw](::onnx::InferenceContext& ctx) { infer_custom_op(*raw, ctx); });
    s->Finalize();
    CustomOpDefinition out{s, opreg::op_def_from_schema(*s, opreg::OpSource::kPlugin)};
    out.def.origin = c.library;
    out.def.any_attributes = !c.declared;
    out.def.infer = c.infer;
    return out;
  } catch (const std::exception& ex) {
    return invalid_argument(what + ": invalid schema: " + ex.what());
  }
}

std::shared_ptr<const ::onnx::ISchemaRegistry> onnx_schema_view(CustomSchemaLookup custom) {
  return std::make_shared<SchemaView>(std::move(custom));
}

}  // namespace loom::onnxio
