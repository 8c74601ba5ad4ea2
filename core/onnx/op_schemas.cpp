#include "onnx/op_schemas.h"

#include "onnx/isolated_inference.h"

#include <onnx/defs/shape_inference.h>

#include <algorithm>

#include "loom/plugin_api.h"
#include "onnx/model_loader.h"
#include "onnx/tensor_proto.h"
#include "opreg/op_registry.h"

#include <onnx/defs/schema.h>

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

}  // namespace

struct OpSchemas::Entry {
  std::unique_ptr<CustomOpSchema> op;
  std::unique_ptr<::onnx::OpSchema> onnx;
  std::unique_ptr<opreg::OpDef> def;
};

// The custom ops as ONNX schemas in front of the op registry's, for ONNX's
// shape inference.
class OpSchemas::OnnxView final : public ::onnx::ISchemaRegistry {
 public:
  explicit OnnxView(const OpSchemas& owner) : owner_(owner) {}
  const ::onnx::OpSchema* GetSchema(const std::string& key, const int max_inclusive_version,
                                    const std::string& domain) const override {
    if (const Entry* e = owner_.entry(key, max_inclusive_version, domain)) return e->onnx.get();
    return opreg::find_schema(key, max_inclusive_version, domain);
  }

 private:
  const OpSchemas& owner_;
};

OpSchemas::OpSchemas()
    : onnx_view_(std::make_unique<OnnxView>(*this)), server_(std::make_unique<InferenceServer>(onnx_view_.get())) {}
OpSchemas::~OpSchemas() = default;

const ::onnx::ISchemaRegistry& OpSchemas::onnx_registry() const { return *onnx_view_; }

InferenceServer& OpSchemas::inference_server() const { return *server_; }

Status OpSchemas::add(CustomOpSchema op) {
  const std::string what = "custom op " + op.qualified_name() + " (since " + std::to_string(op.since_version) + ")";
  auto& versions = ops_[{op.domain, op.op_type}];
  for (const auto& e : versions)
    if (e->op->since_version == op.since_version) return invalid_argument(what + " is declared twice");
  auto e = std::make_unique<Entry>();
  e->op = std::make_unique<CustomOpSchema>(std::move(op));
  const CustomOpSchema& c = *e->op;
  try {
    auto s = std::make_unique<::onnx::OpSchema>(c.op_type, c.library, 0);
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
    const CustomOpSchema* raw = e->op.get();
    s->TypeAndShapeInferenceFunction([raw](::onnx::InferenceContext& ctx) { infer_custom_op(*raw, ctx); });
    s->Finalize();
    e->def = std::make_unique<opreg::OpDef>(opreg::op_def_from_schema(*s, opreg::OpSource::kPlugin));
    e->def->origin = c.library;
    e->def->any_attributes = !c.declared;
    e->def->infer = c.infer;
    e->onnx = std::move(s);
  } catch (const std::exception& ex) {
    return invalid_argument(what + ": invalid schema: " + ex.what());
  }
  versions.push_back(std::move(e));
  std::sort(versions.begin(), versions.end(), [](const std::unique_ptr<Entry>& a, const std::unique_ptr<Entry>& b) {
    return a->op->since_version < b->op->since_version;
  });
  return Status::ok();
}

const OpSchemas::Entry* OpSchemas::entry(const std::string& op_type, int64_t opset, const std::string& domain) const {
  auto it = ops_.find({domain == "ai.onnx" ? std::string() : domain, op_type});
  if (it == ops_.end()) return nullptr;
  const Entry* best = nullptr;
  for (const auto& e : it->second)
    if (e->op->since_version <= opset) best = e.get();
  return best;
}

const opreg::OpDef* OpSchemas::find_def(const std::string& op_type, int64_t opset, const std::string& domain) const {
  if (const Entry* e = entry(op_type, opset, domain)) return e->def.get();
  return opreg::find_op_def(op_type, opset, domain);
}

const CustomOpSchema* OpSchemas::custom_op(const std::string& op_type, int64_t opset, const std::string& domain) const {
  const Entry* e = entry(op_type, opset, domain);
  return e ? e->op.get() : nullptr;
}

bool OpSchemas::has_custom_domain(const std::string& domain) const {
  for (const auto& [key, versions] : ops_)
    if (key.first == domain) return true;
  return false;
}

std::string OpSchemas::describe_domain(const std::string& domain) const {
  std::string out;
  for (const auto& [key, versions] : ops_) {
    if (key.first != domain) continue;
    for (const auto& e : versions)
      out += (out.empty() ? "" : ", ") + key.second +
             (e->op->since_version > 1 ? "@" + std::to_string(e->op->since_version) : std::string());
  }
  return out;
}

const opreg::OpDef* lookup_op_def(const ir::Graph& graph, const ir::Node& node) {
  if (graph.op_schemas) return graph.op_schemas->find_def(node.op_type, node.opset, node.domain);
  return opreg::find_op_def(node.op_type, node.opset, node.domain);
}

void bind_op_defs(ir::Graph& graph) {
  for (const auto& node : graph.nodes()) {
    node->op_def = op_def_of(graph, *node);
    for (ir::Attribute& a : node->attributes) {
      if (a.graph) bind_op_defs(*a.graph);
      for (const auto& g : a.graphs)
        if (g) bind_op_defs(*g);
    }
  }
}

const opreg::OpDef* op_def_of(const ir::Graph& graph, const ir::Node& node) {
  const opreg::OpDef* d = node.op_def;
  // A pass that copies a node and gives the copy another op keeps the
  // copied binding: it is only taken when it is still the node's op.
  if (d != nullptr && d->name == node.op_type && d->domain == node.domain && d->since_version <= node.opset) return d;
  return lookup_op_def(graph, node);
}

}  // namespace loom::onnxio
