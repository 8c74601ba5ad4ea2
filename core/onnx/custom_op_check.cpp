#include "onnx/custom_op_check.h"

#include <algorithm>
#include <map>

#include "onnx/node_check.h"

namespace loom::onnxio {
namespace {

class NodeCheck {
 public:
  NodeCheck(const ir::Graph& g, const ir::Node& n, const CustomOpSchema& op, const opreg::OpDef& def)
      : g_(g), n_(n), op_(op), def_(def) {}

  Status run() {
    if (Status st = check_node_signature(signature_of(n_), def_, check_depth(def_, n_.opset, op_.declared)); !st)
      return error(st.message());
    if (!op_.declared) return Status::ok();  // a 0.1 schema: arity is all it says
    std::map<std::string, std::pair<DType, std::string>> bound;  // param -> (dtype, value that set it)
    LOOM_RETURN_IF_ERROR(check_types("input", n_.inputs, false, bound));
    LOOM_RETURN_IF_ERROR(check_types("output", n_.outputs, true, bound));
    return check_inference();
  }

 private:
  Status error(const std::string& what) const {
    return invalid_graph("node " + n_.label() + ": " + what + " (custom op " + op_.qualified_name() + " from plugin " +
                         op_.library + ")");
  }

  // Element types allowed by the constraints and agreeing across the
  // values bound to one type parameter.
  Status check_types(const char* kind, const std::vector<std::string>& values, bool outputs,
                     std::map<std::string, std::pair<DType, std::string>>& bound) const {
    for (size_t i = 0; i < values.size(); ++i) {
      const opreg::FormalDef* f = outputs ? def_.output_formal(i) : def_.input_formal(i);
      if (values[i].empty() || f == nullptr) continue;
      const ir::ValueType* t = g_.type_of(values[i]);
      if (t == nullptr || t->dtype == DType::kUndefined) continue;  // decided at run time
      const std::string value = std::string(kind) + " '" + values[i] + "'";
      if (const opreg::TypeConstraintDef* c = def_.constraint(f->type_str)) {
        const std::string type = opreg::tensor_type_string(t->dtype);
        if (std::find(c->allowed.begin(), c->allowed.end(), type) == c->allowed.end()) {
          std::string names;
          for (const std::string& a : c->allowed)
            names += (names.empty() ? "" : ", ") + dtype_name(opreg::dtype_from_type_string(a));
          return error(value + " is " + dtype_name(t->dtype) + ", but " + f->type_str + " allows " + names);
        }
      }
      auto [it, fresh] = bound.try_emplace(f->type_str, t->dtype, value);
      if (!fresh && it->second.first != t->dtype)
        return error(value + " is " + dtype_name(t->dtype) + ", but " + it->second.second + " bound " + f->type_str +
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
  const opreg::OpDef& def_;
};

}  // namespace

Status check_custom_node(const ir::Graph& graph, const ir::Node& node, const OpSchemas& schemas) {
  const CustomOpSchema* op = schemas.custom_op(node.op_type, node.opset, node.domain);
  const opreg::OpDef* def = schemas.find_def(node.op_type, node.opset, node.domain);
  if (op == nullptr || def == nullptr)
    return invalid_graph("node " + node.label() + ": op '" + node.op_type + "' is not in custom-op domain '" +
                         node.domain + "' at opset " + std::to_string(node.opset) +
                         " (the loaded plugins declare: " + schemas.describe_domain(node.domain) + ")");
  return NodeCheck(graph, node, *op, *def).run();
}

}  // namespace loom::onnxio
