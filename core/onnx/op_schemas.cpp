#include "onnx/op_schemas.h"

#include <algorithm>

#include "opreg/onnx_inference/custom_op_schemas.h"
#include "opreg/onnx_inference/isolated_inference.h"

namespace loom::onnxio {

struct OpSchemas::Entry {
  std::unique_ptr<CustomOpSchema> op;
  std::shared_ptr<const ::onnx::OpSchema> onnx;
  std::unique_ptr<opreg::OpDef> def;
};

OpSchemas::OpSchemas()
    : onnx_view_(onnx_schema_view([this](const std::string& op_type, int max_version, const std::string& domain) {
        const Entry* e = entry(op_type, max_version, domain);
        return e != nullptr ? e->onnx.get() : nullptr;
      })),
      server_(std::make_unique<InferenceServer>(onnx_view_.get())) {}
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
  auto defined = define_custom_op(*e->op);
  if (!defined) return defined.status();
  e->onnx = std::move(defined->onnx);
  e->def = std::make_unique<opreg::OpDef>(std::move(defined->def));
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
    for (ir::Graph* body : ir::subgraphs_of(*node)) bind_op_defs(*body);
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
