// com.microsoft BiasGelu(A, B) = Gelu_erf(A + B) and FastGelu(X, bias) =
// Gelu_tanh(X + bias) standalone: one oneDNN binary add with the activation
// as an eltwise post-op. After a MatMul / Conv / Gemm / binary they are
// post-ops of that primitive instead (plan_post_ops); FastGelu without a bias
// is a plain unary eltwise (build_unary).
#include <oneapi/dnnl/dnnl.hpp>

#include "eltwise_ops.h"
#include "ops/op_builders.h"
#include "ops/operand_layout.h"

namespace loom::onednn {

size_t build_bias_activation(ProgramBuilder& b, const NodeSpec& n, const Chain& chain) {
  const auto steps = bias_activation_for(n);
  if (!steps) return build_unary(b, n, chain);
  ValueId x = b.value_of(n.inputs[0]), bias = b.value_of(n.inputs[1]);
  // ORT: the bias is 1-D with the input's last dim; A + B is commutative, so
  // either operand may be the full-shape one.
  if (b.dims(x).size() == 1 && b.dims(bias).size() > 1) std::swap(x, bias);
  const std::vector<int64_t> dims = b.dims(x);
  if (dims.empty() || b.dims(bias) != std::vector<int64_t>{dims.back()})
    n.fail("bias must be 1-D with the input's last dimension (" + std::to_string(dims.empty() ? 0 : dims.back()) + ")");
  std::vector<int64_t> bias_dims(dims.size(), 1);
  bias_dims.back() = dims.back();
  const ValueId src1 = b.view(bias, bias_dims);
  dnnl::post_ops po;
  for (const EltwiseStep& s : *steps) po.append_eltwise(1.f, s.alg, s.alpha, s.beta);
  dnnl::primitive_attr attr = b.attr();
  attr.set_post_ops(po);
  // The input's own layout (what the primitive before chose); plain if that fails.
  auto make = [&](const dnnl::memory::desc& layout) {
    dnnl::binary::desc d(dnnl::algorithm::binary_add, layout, desc_like(layout, bias_dims), layout);
    return dnnl::binary::primitive_desc(d, attr, b.engine());
  };
  dnnl::binary::primitive_desc pd;
  try {
    pd = make(b.desc(x));
  } catch (const dnnl::error&) {
    pd = make(plain_desc(dims));
  }
  const ValueId dst = b.new_value(pd.dst_desc(), dims, n.outputs[0]);
  b.add_step(dnnl::binary(pd),
             {{DNNL_ARG_SRC_0, b.require(x, pd.src0_desc())}, {DNNL_ARG_SRC_1, b.require(src1, pd.src1_desc())},
              {DNNL_ARG_DST, dst}},
             pd.scratchpad_desc(), n.label());
  b.define(n.outputs[0], dst);
  return 0;
}

}  // namespace loom::onednn
