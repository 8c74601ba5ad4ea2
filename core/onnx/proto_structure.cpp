#include "onnx/proto_structure.h"

#include "onnx/model_loader.h"
#include "onnx/node_check.h"
#include "onnx/op_schemas.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace loom::onnxio {
namespace {

using Scope = std::unordered_set<std::string>;

// The subgraphs in a node's attributes (If branches, Loop / Scan bodies).
std::vector<const ::onnx::GraphProto*> subgraphs_of(const ::onnx::NodeProto& n) {
  std::vector<const ::onnx::GraphProto*> out;
  for (const auto& a : n.attribute()) {
    if (a.has_g()) out.push_back(&a.g());
    for (const auto& sub : a.graphs()) out.push_back(&sub);
  }
  return out;
}

std::string node_label(const ::onnx::NodeProto& n, int index) {
  return (n.name().empty() ? "#" + std::to_string(index) : "'" + n.name() + "'") + " (" + n.op_type() + ")";
}

int32_t elem_type_of(const ::onnx::ValueInfoProto& v) {
  return v.type().has_tensor_type() ? v.type().tensor_type().elem_type() : 0;
}

std::string elem_type_name(int32_t t) {
  return ::onnx::TensorProto_DataType_IsValid(t) ? ::onnx::TensorProto_DataType_Name(t) : std::to_string(t);
}

// The tensor element types `g` declares for its outputs and value_info.
std::unordered_map<std::string, int32_t> declared_elem_types(const ::onnx::GraphProto& g) {
  std::unordered_map<std::string, int32_t> out;
  for (const auto* list : {&g.output(), &g.value_info()})
    for (const auto& v : *list)
      if (const int32_t t = elem_type_of(v)) out.emplace(v.name(), t);
  return out;
}

const ::onnx::GraphProto* graph_attribute(const ::onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name && a.has_g()) return &a.g();
  return nullptr;
}

// ONNX's If: each branch returns one value per output of the node, and both
// return the same element types, which are the types the model declares for
// the node's outputs. Checked on what the model declares (a branch whose
// nodes make another type than its outputs declare fails when it runs).
Status check_if_branches(const ::onnx::NodeProto& n, int index,
                         const std::unordered_map<std::string, int32_t>& declared) {
  const ::onnx::GraphProto* then_g = graph_attribute(n, "then_branch");
  const ::onnx::GraphProto* else_g = graph_attribute(n, "else_branch");
  if (then_g == nullptr || else_g == nullptr) return Status::ok();  // the schema check names missing branches
  const std::string who = "node " + node_label(n, index);
  if (then_g->output_size() != n.output_size() || else_g->output_size() != n.output_size())
    return invalid_graph(who + ": then_branch returns " + std::to_string(then_g->output_size()) +
                         " value(s) and else_branch " + std::to_string(else_g->output_size()) + " for " +
                         std::to_string(n.output_size()) + " output(s) (ONNX's If: one value per output)");
  for (int i = 0; i < n.output_size(); ++i) {
    const int32_t t = elem_type_of(then_g->output(i)), e = elem_type_of(else_g->output(i));
    if (t != 0 && e != 0 && t != e)
      return invalid_graph(who + ": then_branch returns " + elem_type_name(t) + " as output " + std::to_string(i) +
                           ", else_branch " + elem_type_name(e) + " (ONNX's If: both branches return the same types)");
    auto d = declared.find(n.output(i));
    const int32_t b = t != 0 ? t : e;
    if (b != 0 && d != declared.end() && d->second != b)
      return invalid_graph(who + ": output '" + n.output(i) + "' is declared " + elem_type_name(d->second) +
                           ", its branches return " + elem_type_name(b) +
                           " (ONNX's If: the branches' types are the node's output types)");
  }
  return Status::ok();
}

bool is_if(const ::onnx::NodeProto& n) {
  return n.op_type() == "If" && (n.domain().empty() || n.domain() == "ai.onnx");
}

Status check_graph(const ::onnx::GraphProto& g, std::vector<Scope>& scopes, int depth, int max_depth) {
  if (depth > max_depth)
    return invalid_graph("subgraphs nested deeper than " + std::to_string(max_depth) + " levels");
  Scope& defined = scopes.emplace_back();
  for (const auto& v : g.input()) defined.insert(v.name());
  for (const auto& t : g.initializer()) defined.insert(t.name());
  for (const auto& n : g.node())
    for (const std::string& o : n.output())
      if (!o.empty()) defined.insert(o);
  auto is_defined = [&](const std::string& name) {
    for (const Scope& s : scopes)
      if (s.count(name)) return true;
    return false;
  };
  std::unordered_map<std::string, int32_t> declared;  // made once, for the graph's first If
  bool declared_ready = false;
  for (int i = 0; i < g.node_size(); ++i) {
    const ::onnx::NodeProto& n = g.node(i);
    if (is_if(n)) {
      if (!declared_ready) declared = declared_elem_types(g);
      declared_ready = true;
      LOOM_RETURN_IF_ERROR(check_if_branches(n, i, declared));
    }
    for (const std::string& in : n.input())
      if (!in.empty() && !is_defined(in))
        return invalid_graph("node " + node_label(n, i) + " reads '" + in + "', which no input, initializer or node of " +
                             (depth == 0 ? "the graph" : "subgraph '" + g.name() + "' or its enclosing graphs") +
                             " defines");
    for (const ::onnx::GraphProto* sub : subgraphs_of(n))
      LOOM_RETURN_IF_ERROR(check_graph(*sub, scopes, depth + 1, max_depth));
  }
  scopes.pop_back();
  return Status::ok();
}

// An attribute's type as the proto says it, or as its one set field says
// when the type is left undefined (early exporters did).
ir::AttrType attribute_type(const ::onnx::AttributeProto& a) {
  if (a.type() != ::onnx::AttributeProto::UNDEFINED) return static_cast<ir::AttrType>(a.type());
  if (a.has_f()) return ir::AttrType::kFloat;
  if (a.has_i()) return ir::AttrType::kInt;
  if (a.has_s()) return ir::AttrType::kString;
  if (a.has_t()) return ir::AttrType::kTensor;
  if (a.has_g()) return ir::AttrType::kGraph;
  if (a.floats_size() > 0) return ir::AttrType::kFloats;
  if (a.ints_size() > 0) return ir::AttrType::kInts;
  if (a.strings_size() > 0) return ir::AttrType::kStrings;
  if (a.tensors_size() > 0) return ir::AttrType::kTensors;
  if (a.graphs_size() > 0) return ir::AttrType::kGraphs;
  return ir::AttrType::kUndefined;
}

NodeSignature signature_of(const ::onnx::NodeProto& n) {
  NodeSignature s;
  s.inputs.assign(n.input().begin(), n.input().end());
  s.outputs.assign(n.output().begin(), n.output().end());
  for (const auto& a : n.attribute()) s.attributes.emplace_back(a.name(), attribute_type(a));
  return s;
}

Status verify_graph(const ::onnx::GraphProto& g, const OpSchemas* schemas,
                    const std::map<std::string, int64_t>& opsets) {
  for (int i = 0; i < g.node_size(); ++i) {
    const ::onnx::NodeProto& n = g.node(i);
    const std::string domain = n.domain() == "ai.onnx" ? std::string() : n.domain();
    auto version = opsets.find(domain);
    // ONNX's domains, and ONNX Runtime's contrib ops the registry defines.
    if ((is_onnx_domain(domain) || domain == "com.microsoft") && version != opsets.end()) {
      const opreg::OpDef* def = schemas != nullptr ? schemas->find_def(n.op_type(), version->second, domain)
                                                   : opreg::find_op_def(n.op_type(), version->second, domain);
      if (def != nullptr)
        if (Status st = check_node_signature(signature_of(n), *def, check_depth(*def, version->second)); !st)
          return invalid_graph("node " + node_label(n, i) + " does not match its op's schema at opset " +
                               std::to_string(version->second) + ": " + st.message());
    }
    for (const ::onnx::GraphProto* sub : subgraphs_of(n)) LOOM_RETURN_IF_ERROR(verify_graph(*sub, schemas, opsets));
  }
  return Status::ok();
}

}  // namespace

Status verify_onnx_nodes(const ::onnx::GraphProto& graph, const OpSchemas* schemas,
                         const std::map<std::string, int64_t>& opsets) {
  return verify_graph(graph, schemas, opsets);
}

Status check_value_definitions(const ::onnx::GraphProto& graph, int max_depth) {
  std::vector<Scope> scopes;
  return check_graph(graph, scopes, 0, max_depth);
}

}  // namespace loom::onnxio
