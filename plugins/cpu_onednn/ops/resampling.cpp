// Resize (opsets 11..13) / Upsample (opset 9) as oneDNN resampling_forward,
// on the input's own layout (dst format any, so no reorders inside a
// partition). Only the attribute / scale combinations resize_rules.h proves
// exact are claimed; the rule is checked again here on concrete dims.
#include <oneapi/dnnl/dnnl.hpp>

#include "ops/op_builders.h"
#include "resize_rules.h"

namespace loom::onednn {

size_t build_resize(ProgramBuilder& b, const NodeSpec& n, const Chain&) {
  const ValueId x = b.value_of(n.inputs[0]);
  const std::vector<int64_t>& d = b.dims(x);
  if (d.size() != 4) n.fail("expects a rank-4 input");
  std::vector<int64_t> dst_dims;
  if (auto why = resize_mismatch(n, d, &dst_dims); !why.empty()) n.fail(why);
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
