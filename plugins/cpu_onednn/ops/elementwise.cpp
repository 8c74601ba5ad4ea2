// Unary ops as oneDNN eltwise primitives and two-input Add/Sub/Mul/Div/Max/Min
// as oneDNN binary (numpy broadcasting of the second operand) with post-op
// chains. Eltwise works on whatever layout its input already has; binary puts
// every operand in one layout (see build_binary). A first operand that must
// broadcast (Sub / Div, or both operands broadcasting; shapes claim time did
// not know) is expanded by a host copy first.
#include <oneapi/dnnl/dnnl.hpp>

#include "eltwise_ops.h"
#include "ops/op_builders.h"
#include "ops/operand_layout.h"
#include "ops/post_ops.h"

namespace loom::onednn {
namespace {

using dnnl::memory;

std::vector<int64_t> broadcast_dims(const NodeSpec& n, const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const size_t r = std::max(a.size(), b.size());
  std::vector<int64_t> out(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t da = i + a.size() >= r ? a[i + a.size() - r] : 1;
    const int64_t db = i + b.size() >= r ? b[i + b.size() - r] : 1;
    if (da != db && da != 1 && db != 1) n.fail("operand shapes do not broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

}  // namespace

size_t build_unary(ProgramBuilder& b, const NodeSpec& n, const Chain&) {
  const auto steps = eltwise_steps_for(n);
  if (!steps) n.fail("not an element-wise op this EP expresses");
  ValueId v = b.value_of(n.inputs[0]);
  const std::vector<int64_t> dims = b.dims(v);
  for (size_t i = 0; i < steps->size(); ++i) {
    const EltwiseStep& s = (*steps)[i];
    auto make = [&](ValueId src) {
      dnnl::eltwise_forward::desc d(dnnl::prop_kind::forward_inference, s.alg, b.desc(src), s.alpha, s.beta);
      return dnnl::eltwise_forward::primitive_desc(d, b.attr(), b.engine());
    };
    dnnl::eltwise_forward::primitive_desc pd = make(v);
    // Some blocked layouts with padding (e.g. one channel in aBcd16b) have
    // only the reference kernel; plain data has an optimised one.
    if (is_reference_impl(pd.impl_info_str()) && b.desc(v) != plain_desc(dims)) {
      v = b.plain(v);
      pd = make(v);
    }
    const bool last = i + 1 == steps->size();
    const ValueId dst = b.new_value(pd.dst_desc(), dims, last ? n.outputs[0] : "");
    b.add_step(dnnl::eltwise_forward(pd), {{DNNL_ARG_SRC, v}, {DNNL_ARG_DST, dst}}, pd.scratchpad_desc(), n.label());
    v = dst;
  }
  b.define(n.outputs[0], v);
  return 0;
}

// `v` (float32) expanded to `dims` (numpy broadcasting) by a host step:
// oneDNN binary broadcasts only its second operand.
ValueId broadcast_to(ProgramBuilder& b, ValueId v, const std::vector<int64_t>& dims, const std::string& label) {
  const ValueId src = b.plain(v);
  std::vector<int64_t> sd = b.dims(src);
  sd.insert(sd.begin(), dims.size() - sd.size(), 1);
  // Source strides, 0 along broadcast dims.
  std::vector<int64_t> stride(dims.size(), 0);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 1, s = 1; i >= 0; --i) {
    stride[static_cast<size_t>(i)] = sd[static_cast<size_t>(i)] == 1 ? 0 : s;
    s *= sd[static_cast<size_t>(i)];
  }
  const ValueId dst = b.new_value(plain_desc(dims), dims);
  b.add_host_step(
      [dims, stride](const std::vector<dnnl::memory>& m) {
        const auto* in = static_cast<const float*>(m[0].get_data_handle());
        auto* out = static_cast<float*>(m[1].get_data_handle());
        const int64_t count = element_count(dims);
        for (int64_t o = 0; o < count; ++o) {
          int64_t rem = o, off = 0;
          for (size_t d = dims.size(); d-- > 0;) {
            off += (rem % dims[d]) * stride[d];
            rem /= dims[d];
          }
          out[o] = in[off];
        }
      },
      {src, dst}, label + " (first operand broadcast)");
  return dst;
}

size_t build_binary(ProgramBuilder& b, const NodeSpec& n, const Chain& chain) {
  const auto alg = binary_algorithm_for(n);
  if (!alg) n.fail("not a binary op this EP expresses");
  ValueId s0 = b.value_of(n.inputs[0]), s1 = b.value_of(n.inputs[1]);
  const std::vector<int64_t> dst_dims = broadcast_dims(n, b.dims(s0), b.dims(s1));
  // op_support claims unknown ranks; the limit it applies to known ones holds here.
  if (dst_dims.size() > 6) n.fail("rank " + std::to_string(dst_dims.size()) + " is above 6");
  // oneDNN broadcasts only src1: put the full-shape operand first, or
  // expand the first one.
  if (b.dims(s0) != dst_dims) {
    if (is_commutative(*alg) && b.dims(s1) == dst_dims) std::swap(s0, s1);
    else s0 = broadcast_to(b, s0, dst_dims, n.label());
  }
  auto ops = plan_post_ops(b, chain, n.outputs[0], dst_dims, false);
  // src1 padded to the rank (a plain view when it broadcasts).
  const ValueId a = s0;
  const ValueId c = b.dims(s1) == dst_dims ? s1 : b.view(s1, [&] {
    std::vector<int64_t> d = b.dims(s1);
    d.insert(d.begin(), dst_dims.size() - d.size(), 1);
    return d;
  }());
  // One layout for src0, src1, dst and binary post-op operands: oneDNN's
  // optimised kernels need it (else `ref:any`). It is the layout of an
  // operand computed in this partition (what a primitive chose), src0's when
  // both or neither are; the other operand is reordered to it.
  memory::desc layout = b.desc(a);
  if (!b.produced_here(a) && b.dims(c) == dst_dims && b.produced_here(c)) layout = b.desc(c);
  auto make_pd = [&](const memory::desc& lay) {
    size_t used = 0;
    auto pd = create_with_post_ops<dnnl::binary::primitive_desc>(
        b, ops, used, lay, [&](const dnnl::primitive_attr& attr, const memory::desc& dst) {
          dnnl::binary::desc d(*alg, lay, desc_like(lay, b.desc(c).dims()), dst);
          return dnnl::binary::primitive_desc(d, attr, b.engine());
        });
    return std::make_pair(pd, used);
  };
  std::pair<dnnl::binary::primitive_desc, size_t> made;
  try {
    made = make_pd(layout);
  } catch (const dnnl::error&) {
    made = make_pd(plain_desc(dst_dims));
  }
  const auto& [pd, used] = made;
  const ValueId dst = b.new_value(pd.dst_desc(), dst_dims, result_name(n, chain, ops, used));
  std::vector<std::pair<int, ValueId>> args = {{DNNL_ARG_SRC_0, b.require(a, pd.src0_desc())},
                                               {DNNL_ARG_SRC_1, b.require(c, pd.src1_desc())},
                                               {DNNL_ARG_DST, dst}};
  bind_post_ops(b, ops, used, dst, args, n.label());
  b.add_step(dnnl::binary(pd), std::move(args), pd.scratchpad_desc(), n.label());
  return finish_chain(b, n, chain, ops, used, dst);
}

}  // namespace loom::onednn
