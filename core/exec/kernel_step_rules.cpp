#include "exec/kernel_step_rules.h"

#include <algorithm>

#include "onnx/op_schemas.h"

namespace loom::exec {

// Per input (or output) of `def`, whether its kernel reads (writes) it on the
// host (LOOM_KernelDef.host_inputs / host_outputs); empty when none is.
std::vector<bool> on_host(const LOOM_KernelDef* def, bool outputs, size_t count) {
  if (def == nullptr || !LOOM_HAS_FIELD(def, LOOM_KernelDef, host_output_count)) return {};
  const int32_t* list = outputs ? def->host_outputs : def->host_inputs;
  const uint64_t n = outputs ? def->host_output_count : def->host_input_count;
  if (list == nullptr || n == 0) return {};
  std::vector<bool> flags(count, false);
  for (uint64_t k = 0; k < n; ++k)
    if (list[k] >= 0 && static_cast<size_t>(list[k]) < count) flags[static_cast<size_t>(list[k])] = true;
  return flags;
}

// Output element types as the op's ONNX schema determines them.
std::vector<Step::OutputTypeRule> output_type_rules(const ir::Graph& g, const ir::Node& n) {
  std::vector<Step::OutputTypeRule> rules(n.outputs.size());
  const ::onnx::OpSchema* schema = onnxio::schema_of(g, n);
  if (schema == nullptr || schema->outputs().empty()) return rules;
  const auto& formal_in = schema->inputs();
  const auto& formal_out = schema->outputs();
  for (size_t i = 0; i < rules.size(); ++i) {
    const std::string& param = formal_out[std::min(i, formal_out.size() - 1)].GetTypeStr();
    const DType direct = onnxio::dtype_from_onnx_type_string(param);
    if (direct != DType::kUndefined) {
      rules[i].dtype = static_cast<int32_t>(direct);
      continue;
    }
    for (const auto& c : schema->typeConstraintParams())
      if (c.type_param_str == param && c.allowed_type_strs.size() == 1)
        rules[i].dtype = static_cast<int32_t>(onnxio::dtype_from_onnx_type_string(c.allowed_type_strs[0]));
    if (rules[i].dtype != LOOM_DTYPE_UNDEFINED) continue;
    for (size_t k = 0; k < formal_in.size() && rules[i].same_as_input < 0; ++k)
      if (formal_in[k].GetTypeStr() == param) rules[i].same_as_input = static_cast<int>(k);
  }
  return rules;
}

}  // namespace loom::exec
