#include "onnx/node_check.h"

#include <algorithm>
#include <climits>

namespace loom::onnxio {
namespace {

const char* attr_type_name(ir::AttrType t) {
  static const char* kNames[] = {"undefined", "float", "int",     "string",  "tensor", "graph",        "floats",
                                 "ints",      "strings", "tensors", "graphs", "sparse tensor", "?", "type proto"};
  const int i = static_cast<int>(t);
  return i >= 0 && i <= 13 ? kNames[i] : "unknown";
}

std::string arity(int min, int max) {
  if (max < 0 || max == INT_MAX) return "at least " + std::to_string(min);
  if (min == max) return std::to_string(min);
  return std::to_string(min) + " to " + std::to_string(max);
}

// Values named, trailing omitted ones not counted (ONNX's convention).
size_t given(const std::vector<std::string>& values) {
  size_t n = values.size();
  while (n > 0 && values[n - 1].empty()) --n;
  return n;
}

Status problem(const std::string& what) { return invalid_graph(what); }

Status check_count(const char* kind, size_t count, int min, int max, bool only_min) {
  const auto n = static_cast<int64_t>(count);
  if (n >= min && (only_min || max < 0 || n <= max)) return Status::ok();
  return problem("has " + std::to_string(count) + " " + kind + "(s), the schema takes " +
                 (only_min ? arity(min, -1) : arity(min, max)));
}

// Omitted values where the formal is single, and a variadic formal given
// fewer values than its minimum arity.
Status check_formals(const char* kind, const std::vector<std::string>& values,
                     const std::vector<opreg::FormalDef>& formals) {
  const size_t n = given(values);
  for (size_t i = 0; i < n && i < formals.size(); ++i) {
    const opreg::FormalDef& f = formals[i];
    if (f.option == opreg::FormalOption::kVariadic) {
      if (static_cast<int64_t>(n - i) < f.min_arity)
        return problem(std::string(kind) + " " + f.name + " is variadic with at least " + std::to_string(f.min_arity) +
                       " value(s), given " + std::to_string(n - i));
      break;
    }
    if (values[i].empty() && f.option == opreg::FormalOption::kSingle)
      return problem(std::string(kind) + " " + std::to_string(i) + " (" + f.name + ") is omitted but not optional");
  }
  return Status::ok();
}

Status check_attributes(const NodeSignature& node, const opreg::OpDef& def, CheckDepth depth) {
  for (const opreg::AttributeDef& a : def.attributes) {
    auto given_attr = std::find_if(node.attributes.begin(), node.attributes.end(),
                                   [&](const auto& g) { return g.first == a.name; });
    if (given_attr == node.attributes.end()) {
      if (a.required) return problem("required attribute '" + a.name + "' is missing");
      continue;
    }
    if (given_attr->second != a.type)
      return problem(std::string("attribute '") + a.name + "' is " + attr_type_name(given_attr->second) +
                     ", the schema declares " + attr_type_name(a.type));
  }
  if (depth != CheckDepth::kFull || def.any_attributes) return Status::ok();
  for (const auto& [name, type] : node.attributes) {
    if (def.attribute(name) != nullptr) continue;
    std::string known;
    for (const opreg::AttributeDef& a : def.attributes) known += (known.empty() ? "" : ", ") + a.name;
    return problem("attribute '" + name + "' is not in the schema (declared: " + (known.empty() ? "none" : known) +
                   ")");
  }
  return Status::ok();
}

}  // namespace

NodeSignature signature_of(const ir::Node& node) {
  NodeSignature s;
  s.inputs = node.inputs;
  s.outputs = node.outputs;
  for (const ir::Attribute& a : node.attributes) s.attributes.emplace_back(a.name, a.type);
  return s;
}

CheckDepth check_depth(const opreg::OpDef& def, int64_t opset, bool declared) {
  if (def.source == opreg::OpSource::kPlugin) return declared ? CheckDepth::kFull : CheckDepth::kArity;
  if (def.source == opreg::OpSource::kContrib) return CheckDepth::kRequired;
  if (def.source == opreg::OpSource::kOnnx && opset > opreg::last_onnx_library_opset(def.domain))
    return CheckDepth::kRequired;
  return CheckDepth::kFull;
}

Status check_node_signature(const NodeSignature& node, const opreg::OpDef& def, CheckDepth depth) {
  // Later versions add optional inputs and outputs, never drop the
  // required ones: past the library's opsets only the minimum is checked.
  const bool only_min = depth == CheckDepth::kRequired;
  LOOM_RETURN_IF_ERROR(check_count("input", given(node.inputs), def.min_inputs, def.max_inputs, only_min));
  LOOM_RETURN_IF_ERROR(check_count("output", given(node.outputs), def.min_outputs, def.max_outputs, only_min));
  if (depth == CheckDepth::kArity) return Status::ok();
  if (depth == CheckDepth::kFull) {
    if (def.deprecated)
      return problem("op '" + def.name + "' has been deprecated since version " + std::to_string(def.since_version));
    LOOM_RETURN_IF_ERROR(check_formals("input", node.inputs, def.inputs));
    LOOM_RETURN_IF_ERROR(check_formals("output", node.outputs, def.outputs));
  }
  return check_attributes(node, def, depth);
}

}  // namespace loom::onnxio
