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

// Output element types as the op's definition determines them.
std::vector<Step::OutputTypeRule> output_type_rules(const ir::Graph& g, const ir::Node& n) {
  std::vector<Step::OutputTypeRule> rules(n.outputs.size());
  const opreg::OpDef* op = onnxio::op_def_of(g, n);
  if (op == nullptr || op->outputs.empty()) return rules;
  for (size_t i = 0; i < rules.size(); ++i) {
    const opreg::FormalDef* out = op->output_formal(i);
    if (out == nullptr) continue;
    const std::string& param = out->type_str;
    const DType direct = opreg::dtype_from_type_string(param);
    if (direct != DType::kUndefined) {
      rules[i].dtype = static_cast<int32_t>(direct);
      continue;
    }
    if (const opreg::TypeConstraintDef* c = op->constraint(param); c != nullptr && c->allowed.size() == 1)
      rules[i].dtype = static_cast<int32_t>(opreg::dtype_from_type_string(c->allowed[0]));
    if (rules[i].dtype != LOOM_DTYPE_UNDEFINED) continue;
    for (size_t k = 0; k < op->inputs.size() && rules[i].same_as_input < 0; ++k)
      if (op->inputs[k].type_str == param) rules[i].same_as_input = static_cast<int>(k);
  }
  return rules;
}

}  // namespace loom::exec
