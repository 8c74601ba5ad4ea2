#include "opreg/op_def.h"

#include <onnx/defs/schema.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "opreg/op_registry.h"

namespace loom::opreg {
namespace {

const std::map<DType, std::string>& type_strings() {
  static const std::map<DType, std::string> kTypes = {
      {DType::kFloat, "tensor(float)"},
      {DType::kDouble, "tensor(double)"},
      {DType::kFloat16, "tensor(float16)"},
      {DType::kBFloat16, "tensor(bfloat16)"},
      {DType::kInt8, "tensor(int8)"},
      {DType::kInt16, "tensor(int16)"},
      {DType::kInt32, "tensor(int32)"},
      {DType::kInt64, "tensor(int64)"},
      {DType::kUint8, "tensor(uint8)"},
      {DType::kUint16, "tensor(uint16)"},
      {DType::kUint32, "tensor(uint32)"},
      {DType::kUint64, "tensor(uint64)"},
      {DType::kBool, "tensor(bool)"},
      {DType::kString, "tensor(string)"},
      {DType::kComplex64, "tensor(complex64)"},
      {DType::kComplex128, "tensor(complex128)"},
      {DType::kFloat8E4M3FN, "tensor(float8e4m3fn)"},
      {DType::kFloat8E4M3FNUZ, "tensor(float8e4m3fnuz)"},
      {DType::kFloat8E5M2, "tensor(float8e5m2)"},
      {DType::kFloat8E5M2FNUZ, "tensor(float8e5m2fnuz)"},
      {DType::kUint4, "tensor(uint4)"},
      {DType::kInt4, "tensor(int4)"},
      {DType::kFloat4E2M1, "tensor(float4e2m1)"},
      {DType::kFloat8E8M0, "tensor(float8e8m0)"},
      {DType::kUint2, "tensor(uint2)"},
      {DType::kInt2, "tensor(int2)"}};
  return kTypes;
}

FormalOption option_of(::onnx::OpSchema::FormalParameterOption o) {
  switch (o) {
    case ::onnx::OpSchema::Optional: return FormalOption::kOptional;
    case ::onnx::OpSchema::Variadic: return FormalOption::kVariadic;
    default: return FormalOption::kSingle;
  }
}

std::vector<FormalDef> formals_of(const std::vector<::onnx::OpSchema::FormalParameter>& formals) {
  std::vector<FormalDef> out;
  out.reserve(formals.size());
  for (const auto& f : formals)
    out.push_back({f.GetName(), f.GetTypeStr(), option_of(f.GetOption()), f.GetIsHomogeneous(), f.GetMinArity()});
  return out;
}

// ONNX's schema keeps "unchecked attributes" private: its Verify, shown a
// node with the op's minimum formals and one attribute the op cannot
// declare, says whether it is accepted.
bool allows_unchecked_attributes(const ::onnx::OpSchema& s) {
  if (s.Deprecated()) return false;  // Verify refuses any node of it first
  ::onnx::NodeProto probe;
  probe.set_op_type(s.Name());
  probe.set_domain(s.domain());
  for (int i = 0; i < s.min_input(); ++i) probe.add_input("input" + std::to_string(i));
  for (int i = 0; i < s.min_output(); ++i) probe.add_output("output" + std::to_string(i));
  auto* a = probe.add_attribute();
  a->set_name("loom.probe: not an attribute name");
  a->set_type(::onnx::AttributeProto::INT);
  a->set_i(0);
  try {
    s.Verify(probe);
  } catch (const std::exception& e) {
    return std::string(e.what()).find("Unrecognized attribute") == std::string::npos;
  }
  return true;
}

OpDef convert(const ::onnx::OpSchema& s, OpSource source) {
  OpDef d;
  d.domain = s.domain() == "ai.onnx" ? std::string() : s.domain();
  d.name = s.Name();
  d.since_version = s.SinceVersion();
  d.deprecated = s.Deprecated();
  d.source = source;
  d.min_inputs = s.min_input();
  d.max_inputs = s.max_input();
  d.min_outputs = s.min_output();
  d.max_outputs = s.max_output();
  d.inputs = formals_of(s.inputs());
  d.outputs = formals_of(s.outputs());
  for (const auto& c : s.typeConstraintParams()) d.type_constraints.push_back({c.type_param_str, c.allowed_type_strs});
  for (const auto& [name, attr] : s.attributes())
    d.attributes.push_back({name, static_cast<ir::AttrType>(attr.type), attr.required});
  d.any_attributes = allows_unchecked_attributes(s);
  return d;
}

// Converted schemas, by the ONNX schema they came from. Both sources'
// schemas live as long as the process, and so do their definitions.
class Cache {
 public:
  const OpDef* get(const ::onnx::OpSchema* s) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = defs_.find(s);
    if (it != defs_.end()) return it->second.get();
    const OpSource source = !is_loom_schema(s)                ? OpSource::kOnnx
                            : s->domain() == "com.microsoft" ? OpSource::kContrib
                                                             : OpSource::kLoom;
    auto def = std::make_unique<OpDef>(convert(*s, source));
    return defs_.emplace(s, std::move(def)).first->second.get();
  }

 private:
  std::mutex mutex_;
  std::unordered_map<const ::onnx::OpSchema*, std::unique_ptr<OpDef>> defs_;
};

Cache& cache() {
  static Cache* const c = new Cache();  // never destroyed: nodes point at its defs
  return *c;
}

}  // namespace

const FormalDef* OpDef::formal_at(const std::vector<FormalDef>& formals, size_t i) {
  if (i < formals.size()) return &formals[i];
  if (!formals.empty() && formals.back().option == FormalOption::kVariadic) return &formals.back();
  return nullptr;
}

const TypeConstraintDef* OpDef::constraint(const std::string& param) const {
  for (const TypeConstraintDef& c : type_constraints)
    if (c.param == param) return &c;
  return nullptr;
}

const AttributeDef* OpDef::attribute(const std::string& attr_name) const {
  for (const AttributeDef& a : attributes)
    if (a.name == attr_name) return &a;
  return nullptr;
}

std::string OpDef::qualified_name() const { return (domain.empty() ? std::string("ai.onnx") : domain) + "." + name; }

const OpDef* find_op_def(const std::string& op_type, int64_t opset, const std::string& domain) {
  const ::onnx::OpSchema* s = find_schema(op_type, opset, domain);
  return s == nullptr ? nullptr : cache().get(s);
}

std::vector<const OpDef*> all_op_defs() {
  std::vector<const OpDef*> out;
  // The list holds copies: each is looked up again for the registry's own
  // schema, whose address the cache may key on.
  for (const ::onnx::OpSchema& copy : ::onnx::OpSchemaRegistry::get_all_schemas_with_history())
    if (const ::onnx::OpSchema* s = ::onnx::OpSchemaRegistry::Schema(copy.Name(), copy.SinceVersion(), copy.domain()))
      out.push_back(cache().get(s));
  for (const ::onnx::OpSchema* s : loom_schemas()) out.push_back(cache().get(s));
  return out;
}

OpDef op_def_from_schema(const ::onnx::OpSchema& schema, OpSource source) { return convert(schema, source); }

int64_t last_onnx_library_opset(const std::string& domain) {
  const auto& ranges = ::onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto it = ranges.find(domain == "ai.onnx" ? std::string() : domain);
  return it == ranges.end() ? 0 : it->second.second;
}

std::string tensor_type_string(DType dtype) {
  auto it = type_strings().find(dtype);
  return it == type_strings().end() ? std::string() : it->second;
}

DType dtype_from_type_string(const std::string& s) {
  for (const auto& [d, name] : type_strings())
    if (name == s) return d;
  return DType::kUndefined;
}

}  // namespace loom::opreg
