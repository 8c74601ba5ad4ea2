// Resize (opsets 11..19) / Upsample (opset 9) as oneDNN resampling_forward,
// on the input's own layout (dst format any, so no reorders inside a
// partition). Only the attribute / scale combinations resize_rules.h proves
// exact are claimed; the rule is checked again here on concrete dims, and on
// the values of scales or sizes the model computes: a program is built per
// such values (compiled_partition.h keys its cache by them), and values
// oneDNN does not match leave that run's partition to the fallback provider.
#include <oneapi/dnnl/dnnl.hpp>

#include <optional>
#include <string>
#include <vector>

#include "ops/op_builders.h"
#include "resize_rules.h"

namespace loom::onednn {
namespace {

// The values of partition input `name` in this run (sizes or scales: the
// claim admitted int64 / float32), nullopt when it is not a small 1-D
// partition input.
std::optional<std::vector<double>> run_values(const ProgramBuilder& b, const std::string& name) {
  const PartitionSpec& spec = b.spec();
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    if (spec.inputs[i] != name) continue;
    const sdk::ConstTensor& t = b.input(i).bytes;
    if (!t.exists() || t.rank() != 1 || t.size() > 8) return std::nullopt;
    return numbers_of(t);
  }
  return std::nullopt;
}

}  // namespace

size_t build_resize(ProgramBuilder& b, const NodeSpec& n, const Chain&) {
  const ValueId x = b.value_of(n.inputs[0]);
  const std::vector<int64_t>& d = b.dims(x);
  if (d.size() != 4) n.fail("expects a rank-4 input");
  // Scales or sizes the model computes: this run's values, as constants.
  NodeSpec resolved = n;
  bool at_run_time = false;
  for (size_t i : resize_parameter_inputs(n)) {
    if (!n.has_input(i) || (i < n.input_is_constant.size() && n.input_is_constant[i])) continue;
    const std::optional<std::vector<double>> values = run_values(b, n.inputs[i]);
    if (!values)
      throw sdk::Error("cpu_onednn: " + n.label() + ": input '" + n.inputs[i] + "' is not readable when built",
                       LOOM_STATUS_NOT_IMPLEMENTED);
    if (values->empty()) {
      resolved.inputs[i].clear();  // an empty tensor: not given
      continue;
    }
    resolved.small_constants[i] = *values;
    resolved.input_is_constant[i] = true;
    at_run_time = true;
  }
  std::vector<int64_t> dst_dims;
  if (auto why = resize_mismatch(resolved, d, &dst_dims); !why.empty()) {
    if (!at_run_time) n.fail(why);
    throw sdk::Error("cpu_onednn: " + n.label() + ": with this run's scales / sizes: " + why,
                     LOOM_STATUS_NOT_IMPLEMENTED);
  }
  // oneDNN indexes by in / out dims; the factors only restate them.
  const std::vector<float> factors = {static_cast<float>(dst_dims[2]) / static_cast<float>(d[2]),
                                      static_cast<float>(dst_dims[3]) / static_cast<float>(d[3])};
  const dnnl::algorithm alg =
      resize_is_linear(n) ? dnnl::algorithm::resampling_linear : dnnl::algorithm::resampling_nearest;
  dnnl::resampling_forward::desc desc(
      dnnl::prop_kind::forward_inference, alg, factors, b.desc(x),
      dnnl::memory::desc(dst_dims, dnnl::memory::data_type::f32, dnnl::memory::format_tag::any));
  dnnl::resampling_forward::primitive_desc pd(desc, b.attr(), b.engine());
  const ValueId dst = b.new_value(pd.dst_desc(), dst_dims, n.outputs[0]);
  b.add_step(dnnl::resampling_forward(pd), {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, dst}}, pd.scratchpad_desc(), n.label());
  b.define(n.outputs[0], dst);
  return 0;
}

}  // namespace loom::onednn
