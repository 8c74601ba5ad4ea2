#include "onnx/custom_op_check.h"

#include <algorithm>

#include "loom/plugin_api.h"

namespace loom::onnxio {
namespace {

const char* attr_type_name(int32_t t) {
  static const char* kNames[] = {"undefined", "float", "int",     "string", "tensor", "graph",
                                 "floats",    "ints",  "strings", "tensors", "graphs"};
  return t >= 0 && t <= 10 ? kNames[t] : "unknown";
}

std::string arity(int min, int max) {
  if (max < 0) return "at least " + std::to_string(min);
  if (min == max) return std::to_string(min);
  return std::to_string(min) + " to " + std::to_string(max);
}

// Values named, trailing omitted ones not counted (ONNX's convention).
size_t given(const std::vector<std::string>& values) {
  size_t n = values.size();
  while (n > 0 && values[n - 1].empty()) --n;
  return n;
}

class NodeCheck {
 public:
  NodeCheck(const ir::Graph& g, const ir::Node& n, const CustomOpSchema& op) : g_(g), n_(n), op_(op) {}

  Status run() {
    LOOM_RETURN_IF_ERROR(check_arity("input", given(n_.inputs), op_.min_inputs, op_.max_inputs));
    LOOM_RETURN_IF_ERROR(check_arity("output", given(n_.outputs), op_.min_outputs, op_.max_outputs));
    if (!op_.declared) return Status::ok();  // a 0.1 schema: arity is all it says
    LOOM_RETURN_IF_ERROR(check_omitted("input", n_.inputs, op_.inputs));
    LOOM_RETURN_IF_ERROR(check_attributes());
    std::map<std::string, std::pair<DType, std::string>> bound;  // param -> (dtype, value that set it)
    LOOM_RETURN_IF_ERROR(check_types("input", n_.inputs, op_.inputs, bound));
    LOOM_RETURN_IF_ERROR(check_types("output", n_.outputs, op_.outputs, bound));
    return check_inference();
  }

 private:
  Status error(const std::string& what) const {
    return invalid_graph("node " + n_.label() + ": " + what + " (custom op " + op_.qualified_name() + " from plugin " +
                         op_.library + ")");
  }

  Status check_arity(const char* kind, size_t count, int min, int max) const {
    if (static_cast<int64_t>(count) >= min && (max < 0 || static_cast<int64_t>(count) <= max)) return Status::ok();
    return error("has " + std::to_string(count) + " " + kind + "(s), the schema takes " + arity(min, max));
  }

  Status check_omitted(const char* kind, const std::vector<std::string>& values,
                       const std::vector<CustomOpSchema::Formal>& formals) const {
    for (size_t i = 0; i < values.size() && i < formals.size(); ++i)
      if (values[i].empty() && formals[i].option != LOOM_FORMAL_OPTIONAL)
        return error(std::string(kind) + " " + std::to_string(i) + " (" + formals[i].name +
                     ") is omitted but not optional");
    return Status::ok();
  }

  Status check_attributes() const {
    for (const CustomOpSchema::Attribute& a : op_.attributes) {
      const ir::Attribute* given = n_.find_attribute(a.name);
      if (given == nullptr) {
        if (a.required) return error("required attribute '" + a.name + "' is missing");
        continue;
      }
      if (static_cast<int32_t>(given->type) != a.type)
        return error("attribute '" + a.name + "' is " + attr_type_name(static_cast<int32_t>(given->type)) +
                     ", the schema declares " + attr_type_name(a.type));
    }
    for (const ir::Attribute& given : n_.attributes) {
      const bool declared = std::any_of(op_.attributes.begin(), op_.attributes.end(),
                                        [&](const CustomOpSchema::Attribute& a) { return a.name == given.name; });
      if (declared) continue;
      std::string known;
      for (const CustomOpSchema::Attribute& a : op_.attributes) known += (known.empty() ? "" : ", ") + a.name;
      return error("attribute '" + given.name + "' is not in the schema (declared: " +
                   (known.empty() ? "none" : known) + ")");
    }
    return Status::ok();
  }

  Status check_types(const char* kind, const std::vector<std::string>& values,
                     const std::vector<CustomOpSchema::Formal>& formals,
                     std::map<std::string, std::pair<DType, std::string>>& bound) const {
    if (formals.empty()) return Status::ok();
    for (size_t i = 0; i < values.size(); ++i) {
      if (values[i].empty()) continue;
      const CustomOpSchema::Formal& f = formals[std::min(i, formals.size() - 1)];  // variadic tail repeats
      if (f.type_param.empty()) continue;
      const ir::ValueType* t = g_.type_of(values[i]);
      if (t == nullptr || t->dtype == DType::kUndefined) continue;  // decided at run time
      const std::string value = std::string(kind) + " '" + values[i] + "'";
      auto allowed = op_.type_constraints.find(f.type_param);
      if (allowed != op_.type_constraints.end() &&
          std::find(allowed->second.begin(), allowed->second.end(), static_cast<int32_t>(t->dtype)) ==
              allowed->second.end()) {
        std::string names;
        for (int32_t d : allowed->second) names += (names.empty() ? "" : ", ") + dtype_name(static_cast<DType>(d));
        return error(value + " is " + dtype_name(t->dtype) + ", but " + f.type_param + " allows " + names);
      }
      auto [it, fresh] = bound.try_emplace(f.type_param, t->dtype, value);
      if (!fresh && it->second.first != t->dtype)
        return error(value + " is " + dtype_name(t->dtype) + ", but " + it->second.second + " bound " + f.type_param +
                     " to " + dtype_name(it->second.first));
    }
    return Status::ok();
  }

  // The plugin's shape inference on the real node: an error it gives is
  // the model's fault (say, inputs of shapes the op cannot combine).
  Status check_inference() const {
    if (!op_.infer) return Status::ok();
    std::vector<ir::ValueType> outputs(n_.outputs.size());
    if (Status st = op_.infer(g_, n_, &outputs); !st) return error("shape inference failed: " + st.message());
    return Status::ok();
  }

  const ir::Graph& g_;
  const ir::Node& n_;
  const CustomOpSchema& op_;
};

}  // namespace

Status check_custom_node(const ir::Graph& graph, const ir::Node& node, const OpSchemas& schemas) {
  const CustomOpSchema* op = schemas.custom_op(node.op_type, node.opset, node.domain);
  if (op == nullptr)
    return invalid_graph("node " + node.label() + ": op '" + node.op_type + "' is not in custom-op domain '" +
                         node.domain + "' at opset " + std::to_string(node.opset) +
                         " (the loaded plugins declare: " + schemas.describe_domain(node.domain) + ")");
  return NodeCheck(graph, node, *op).run();
}

}  // namespace loom::onnxio
