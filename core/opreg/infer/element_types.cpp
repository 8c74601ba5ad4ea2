#include "opreg/infer/element_types.h"

#include <algorithm>
#include <map>
#include <optional>

#include "onnx/op_schemas.h"
#include "opreg/op_def.h"

namespace loom::opreg {
namespace {

std::optional<DType> attr_dtype(const ir::Node& n, const char* name) {
  const ir::Attribute* a = n.find_attribute(name);
  if (a == nullptr || a->type != ir::AttrType::kInt || a->i <= 0 || a->i > kLastDType) return std::nullopt;
  return static_cast<DType>(a->i);
}

DType input_dtype(const ir::Graph& g, const ir::Node& n, size_t i) {
  return i < n.inputs.size() ? ir::tensor_element_type(g, n.inputs[i]) : DType::kUndefined;
}

// The element type of output `k` of the graph attribute `name`, once its own
// nodes are typed.
DType subgraph_output_dtype(const ir::Node& n, const char* name, size_t k) {
  const ir::Attribute* a = n.find_attribute(name);
  if (a == nullptr || !a->graph || k >= a->graph->outputs.size()) return DType::kUndefined;
  return ir::tensor_element_type(*a->graph, a->graph->outputs[k]);
}

// Constant's output type: the one value attribute it has.
std::optional<DType> constant_dtype(const ir::Node& n) {
  for (const ir::Attribute& a : n.attributes) {
    if (a.name == "value" && a.tensor) return a.tensor->dtype();
    if (a.name == "value_float" || a.name == "value_floats") return DType::kFloat;
    if (a.name == "value_int" || a.name == "value_ints") return DType::kInt64;
    if (a.name == "value_string" || a.name == "value_strings") return DType::kString;
  }
  return std::nullopt;
}

// Output 0's element type where an attribute (or the op's default) picks
// it rather than the formals; nullopt where the formals decide.
std::optional<DType> picked_by_attribute(const ir::Graph& g, const ir::Node& n) {
  if (!n.domain.empty()) return std::nullopt;
  const std::string& op = n.op_type;
  if (op == "Cast") return attr_dtype(n, "to");
  if (op == "Constant") return constant_dtype(n);
  if (op == "ConstantOfShape") {
    const ir::Attribute* v = n.find_attribute("value");
    return v != nullptr && v->tensor ? v->tensor->dtype() : DType::kFloat;
  }
  if (op == "RandomNormal" || op == "RandomUniform") return attr_dtype(n, "dtype").value_or(DType::kFloat);
  if (op == "Multinomial") return attr_dtype(n, "dtype").value_or(DType::kInt32);
  if (op == "EyeLike" || op == "RandomNormalLike" || op == "RandomUniformLike" || op == "Bernoulli") {
    if (auto d = attr_dtype(n, "dtype")) return d;
    const DType in = input_dtype(g, n, 0);
    return in == DType::kUndefined ? std::nullopt : std::optional<DType>(in);
  }
  if (op == "BitCast") return attr_dtype(n, "to");
  if (op == "HannWindow" || op == "HammingWindow" || op == "BlackmanWindow" || op == "MelWeightMatrix")
    return attr_dtype(n, "output_datatype").value_or(DType::kFloat);
  if (op == "QuantizeLinear") {
    if (auto d = attr_dtype(n, "output_dtype")) return d;
    const DType zp = input_dtype(g, n, 2);
    if (zp != DType::kUndefined) return zp;
    return n.inputs.size() > 2 && !n.inputs[2].empty() ? std::nullopt : std::optional<DType>(DType::kUint8);
  }
  return std::nullopt;
}

bool allows(const TypeConstraintDef& c, DType d) {
  const std::string t = tensor_type_string(d);
  return !t.empty() && std::find(c.allowed.begin(), c.allowed.end(), t) != c.allowed.end();
}

class Inference {
 public:
  int run(ir::Graph& g) {
    auto order = g.topological_order();
    if (!order) return gained_;
    for (ir::Node* n : *order) {
      // Bodies first: control flow takes its outputs' types from them.
      for (ir::Graph* body : ir::subgraphs_of(*n)) run(*body);
      visit(g, *n);
    }
    return gained_;
  }

 private:
  void visit(ir::Graph& g, const ir::Node& n) {
    const OpDef* def = onnxio::op_def_of(g, n);
    if (def == nullptr) return;
    if (control_flow(g, n)) return;
    if (n.domain.empty() && n.op_type == "LayerNormalization")
      for (size_t j = 1; j < n.outputs.size() && j < 3; ++j)  // Mean, InvStdDev: in stash_type
        if (!n.outputs[j].empty()) set(g, n.outputs[j], attr_dtype(n, "stash_type").value_or(DType::kFloat));
    if (auto d = picked_by_attribute(g, n)) {
      if (!n.outputs.empty()) set(g, n.outputs[0], *d);
      if (n.op_type != "QuantizeLinear") return;  // its other outputs (none today) follow the formals
    }
    // Type parameters the inputs bind: a known tensor type the parameter
    // allows (any tensor type past the library's opsets, where the
    // definition is an older version's and later ones may allow more).
    const bool older_version = def->source == OpSource::kOnnx && n.opset > last_onnx_library_opset(def->domain);
    std::map<std::string, DType> bound;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const FormalDef* f = def->input_formal(i);
      const DType d = input_dtype(g, n, i);
      if (f == nullptr || d == DType::kUndefined) continue;
      const TypeConstraintDef* c = def->constraint(f->type_str);
      if (c == nullptr || (!older_version && !allows(*c, d))) continue;
      if (f->option == FormalOption::kVariadic && !f->homogeneous) continue;
      bound.emplace(f->type_str, d);
    }
    for (size_t j = 0; j < n.outputs.size(); ++j) {
      const FormalDef* f = def->output_formal(j);
      if (f == nullptr || n.outputs[j].empty()) continue;
      if (j == 0 && picked_by_attribute(g, n)) continue;
      DType d = dtype_from_type_string(f->type_str);
      if (auto b = bound.find(f->type_str); d == DType::kUndefined && b != bound.end()) d = b->second;
      if (d == DType::kUndefined) {
        const TypeConstraintDef* c = def->constraint(f->type_str);
        // A parameter an input shares may allow more types in a later
        // version than in the older one serving the node.
        const bool shared = std::any_of(def->inputs.begin(), def->inputs.end(),
                                        [&](const FormalDef& in) { return in.type_str == f->type_str; });
        if (c != nullptr && c->allowed.size() == 1 && !(older_version && shared))
          d = dtype_from_type_string(c->allowed[0]);
      }
      if (d != DType::kUndefined) set(g, n.outputs[j], d);
    }
  }

  // If, Loop and Scan: outputs take their body's output types (If: the
  // then branch's; Loop: after the condition). True for those ops.
  bool control_flow(ir::Graph& g, const ir::Node& n) {
    if (!n.domain.empty()) return false;
    const char* body = n.op_type == "If" ? "then_branch" : n.op_type == "Loop" || n.op_type == "Scan" ? "body" : nullptr;
    if (body == nullptr) return false;
    const size_t skip = n.op_type == "Loop" ? 1 : 0;
    for (size_t j = 0; j < n.outputs.size(); ++j) {
      const DType d = subgraph_output_dtype(n, body, j + skip);
      if (!n.outputs[j].empty() && d != DType::kUndefined) set(g, n.outputs[j], d);
    }
    return true;
  }

  // Records a tensor's element type where none is known (a typed value, or
  // one typed as a sequence, map or optional, is left as it is).
  void set(ir::Graph& g, const std::string& value, DType d) { gained_ += ir::gain_element_type(g, value, d) ? 1 : 0; }

  int gained_ = 0;
};

}  // namespace

int infer_element_types(ir::Graph& graph) { return Inference().run(graph); }

}  // namespace loom::opreg
