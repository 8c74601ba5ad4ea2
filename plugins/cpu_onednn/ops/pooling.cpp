// MaxPool / AveragePool / GlobalAveragePool / GlobalMaxPool (2-D) as oneDNN
// pooling_v2 (which has dilations), on the input's own layout and element
// type (float32; u8 / s8 for the MaxPool of a DQ -> MaxPool -> Q, see
// pattern_fusion.h).
#include <oneapi/dnnl/dnnl.hpp>

#include "ops/op_builders.h"
#include "ops/post_ops.h"
#include "ops/window.h"

namespace loom::onednn {

size_t build_pool(ProgramBuilder& b, const NodeSpec& n, const Chain&) {
  ValueId x = b.value_of(n.inputs[0]);
  const std::vector<int64_t>& d = b.dims(x);
  if (d.size() != 4) n.fail("expects a rank-4 input");
  const bool global = n.op_type == "GlobalAveragePool" || n.op_type == "GlobalMaxPool";
  const bool is_max = n.op_type == "MaxPool" || n.op_type == "GlobalMaxPool";
  Window w;
  if (global) {
    w.kernel = {d[2], d[3]};
    w.strides = w.dilations = {1, 1};
    w.pad_begin = w.pad_end = {0, 0};
    w.out = {1, 1};
  } else {
    w = forward_window(n, {d[2], d[3]}, n.attr_ints("kernel_shape"), n.attr_int("ceil_mode", 0) != 0);
  }
  const dnnl::algorithm alg = is_max ? dnnl::algorithm::pooling_max
                              : n.attr_int("count_include_pad", 0) ? dnnl::algorithm::pooling_avg_include_padding
                                                                   : dnnl::algorithm::pooling_avg_exclude_padding;
  const std::vector<int64_t> dst_dims = {d[0], d[1], w.out[0], w.out[1]};
  const dnnl::memory::data_type type = b.desc(x).data_type();
  auto make = [&](const dnnl::memory::desc& src) {
    dnnl::pooling_v2_forward::desc desc(dnnl::prop_kind::forward_inference, alg, src,
                                        dnnl::memory::desc(dst_dims, type, dnnl::memory::format_tag::any), w.strides,
                                        w.kernel, w.dnnl_dilations(), w.pad_begin, w.pad_end);
    return dnnl::pooling_v2_forward::primitive_desc(desc, b.attr(), b.engine());
  };
  dnnl::pooling_v2_forward::primitive_desc pd = make(b.desc(x));
  // oneDNN 2.6's int8 pooling kernels take channels-last (or blocked) data;
  // plain NCHW gets its reference kernel (ref:any), slower than one reorder.
  if (type != dnnl::memory::data_type::f32 && is_reference_impl(pd.impl_info_str())) {
    const dnnl::memory::desc nhwc(d, type, dnnl::memory::format_tag::acdb);
    try {
      auto fast = make(nhwc);
      if (!is_reference_impl(fast.impl_info_str())) {
        x = b.require(x, nhwc);
        pd = fast;
      }
    } catch (const dnnl::error&) {
      // Keep the reference kernel.
    }
  }
  const ValueId dst = b.new_value(pd.dst_desc(), dst_dims, n.outputs[0]);
  b.add_step(dnnl::pooling_v2_forward(pd), {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, dst}}, pd.scratchpad_desc(), n.label());
  b.define(n.outputs[0], dst);
  return 0;
}

}  // namespace loom::onednn
