#include "partition/kernel_match.h"

#include "onnx/op_schemas.h"

#include <algorithm>
#include <optional>

namespace loom::partition {
namespace {

std::string sv(LOOM_StringView v) { return v.size && v.data ? std::string(v.data, v.size) : std::string(); }

std::string norm(std::string d) { return d == "ai.onnx" ? std::string() : d; }

bool floating(int32_t d) {
  return d == LOOM_DTYPE_FLOAT16 || d == LOOM_DTYPE_FLOAT || d == LOOM_DTYPE_DOUBLE || d == LOOM_DTYPE_BFLOAT16;
}

// An op without a schema (ONNX Runtime's com.microsoft ops) does not say
// which values a type parameter binds. A constraint listing only
// floating-point types is then checked against the node's floating-point
// tensors: one of them must have a listed type (a float-only kernel declines
// a float16 node instead of failing when it runs).
bool float_types_match(const LOOM_KernelDef& def, const ir::Graph& graph, const ir::Node& node, std::string* why_not) {
  for (uint64_t c = 0; c < def.constraint_count; ++c) {
    if (def.constraints == nullptr || def.constraints[c] == nullptr) continue;
    const LOOM_TypeConstraint& tc = *def.constraints[c];
    if (tc.dtype_count == 0 || !std::all_of(tc.dtypes, tc.dtypes + tc.dtype_count, floating)) continue;
    std::optional<DType> unlisted;
    bool listed = false;
    for (const auto* values : {&node.inputs, &node.outputs})
      for (const std::string& v : *values) {
        const ir::ValueType* t = v.empty() ? nullptr : graph.type_of(v);
        if (t == nullptr || !floating(static_cast<int32_t>(t->dtype))) continue;
        if (std::find(tc.dtypes, tc.dtypes + tc.dtype_count, static_cast<int32_t>(t->dtype)) != tc.dtypes + tc.dtype_count)
          listed = true;
        else
          unlisted = t->dtype;
      }
    if (!listed && unlisted) {
      *why_not = "no kernel for " + sv(tc.param) + "=" + dtype_name(*unlisted);
      return false;
    }
  }
  return true;
}

// Checks each constraint against the dtypes of the node's values bound to the
// constraint's type parameter. Unknown dtypes pass (decided at run time).
bool types_match(const LOOM_KernelDef& def, const ir::Graph& graph, const ir::Node& node, std::string* why_not) {
  if (def.constraint_count == 0) return true;
  const opreg::OpDef* op = onnxio::op_def_of(graph, node);
  if (op == nullptr) return float_types_match(def, graph, node, why_not);
  auto check = [&](bool outputs, const std::vector<std::string>& values) {
    for (size_t i = 0; i < values.size(); ++i) {
      const opreg::FormalDef* f = outputs ? op->output_formal(i) : op->input_formal(i);
      if (values[i].empty() || f == nullptr) continue;
      const ir::ValueType* t = graph.type_of(values[i]);
      if (t == nullptr || t->dtype == DType::kUndefined) continue;
      for (uint64_t c = 0; c < def.constraint_count; ++c) {
        if (def.constraints == nullptr || def.constraints[c] == nullptr) continue;
        const LOOM_TypeConstraint& tc = *def.constraints[c];
        if (sv(tc.param) != f->type_str) continue;
        const int32_t d = static_cast<int32_t>(t->dtype);
        if (std::find(tc.dtypes, tc.dtypes + tc.dtype_count, d) == tc.dtypes + tc.dtype_count) {
          *why_not = "no kernel for " + sv(tc.param) + "=" + dtype_name(t->dtype);
          return false;
        }
      }
    }
    return true;
  };
  return check(false, node.inputs) && check(true, node.outputs);
}

}  // namespace

const LOOM_KernelDef* find_kernel(const plugin_host::EpInstance& ep, const ir::Graph& graph, const ir::Node& node,
                                  std::string* why_not) {
  return find_kernel_among(ep.kernels(), graph, node, why_not);
}

const LOOM_KernelDef* find_kernel_among(const std::vector<const LOOM_KernelDef*>& kernels, const ir::Graph& graph,
                                        const ir::Node& node, std::string* why_not) {
  const LOOM_KernelDef* best = nullptr;
  bool op_seen = false;
  std::string type_reason;
  for (const LOOM_KernelDef* def : kernels) {
    if (norm(sv(def->domain)) != node.domain || sv(def->op_type) != node.op_type) continue;
    op_seen = true;
    if (node.opset < def->since_version || node.opset > def->end_version) continue;
    std::string reason;
    if (!types_match(*def, graph, node, &reason)) {
      type_reason = reason;
      continue;
    }
    if (best == nullptr || def->since_version > best->since_version) best = def;
  }
  if (best == nullptr) {
    const std::string op = (node.domain.empty() ? "" : node.domain + ".") + node.op_type;
    if (!op_seen)
      *why_not = "no kernel for " + op;
    else if (!type_reason.empty())
      *why_not = type_reason + " (" + op + ")";
    else
      *why_not = "no kernel for " + op + " at opset " + std::to_string(node.opset);
  }
  return best;
}

}  // namespace loom::partition
