// BatchNormalization (inference statistics), LayerNormalization and Softmax.
#include <oneapi/dnnl/dnnl.hpp>

#include "ops/op_builders.h"

namespace loom::onednn {

using dnnl::normalization_flags;

size_t build_batch_norm(ProgramBuilder& b, const NodeSpec& n, const Chain&) {
  const ValueId x = b.value_of(n.inputs[0]);
  const std::vector<int64_t>& d = b.dims(x);
  if (d.size() < 2) n.fail("expects rank >= 2");
  const std::vector<int64_t> per_channel = {d[1]};
  ValueId params[4];  // scale, bias, mean, var
  for (size_t i = 0; i < 4; ++i) {
    params[i] = b.value_of(n.inputs[i + 1]);
    if (b.dims(params[i]) != per_channel) n.fail("scale, bias, mean and var must have one value per channel");
    params[i] = b.plain(params[i]);
  }
  const auto flags = normalization_flags::use_global_stats | normalization_flags::use_scale | normalization_flags::use_shift;
  dnnl::batch_normalization_forward::desc desc(dnnl::prop_kind::forward_inference, b.desc(x),
                                               n.attr_float("epsilon", 1e-5f), flags);
  dnnl::batch_normalization_forward::primitive_desc pd(desc, b.attr(), b.engine());
  const ValueId dst = b.new_value(pd.dst_desc(), d, n.outputs[0]);
  b.add_step(dnnl::batch_normalization_forward(pd),
             {{DNNL_ARG_SRC, x}, {DNNL_ARG_SCALE, params[0]}, {DNNL_ARG_SHIFT, params[1]},
              {DNNL_ARG_MEAN, params[2]}, {DNNL_ARG_VARIANCE, params[3]}, {DNNL_ARG_DST, dst}},
             pd.scratchpad_desc(), n.label());
  b.define(n.outputs[0], dst);
  return 0;
}

size_t build_layer_norm(ProgramBuilder& b, const NodeSpec& n, const Chain&) {
  const ValueId x = b.value_of(n.inputs[0]);
  const std::vector<int64_t> d = b.dims(x);
  const int64_t rank = static_cast<int64_t>(d.size());
  int64_t axis = n.attr_int("axis", -1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) n.fail("axis out of range");
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i) (i < axis ? outer : inner) *= d[i];
  // Scale and bias must have exactly the normalised dims (op_support may
  // claim before the rank is known; no broadcasting is done here).
  const std::vector<int64_t> normalised(d.begin() + axis, d.end());
  for (size_t i = 1; i <= 2; ++i)
    if (n.has_input(i) && b.dims(b.value_of(n.inputs[i])) != normalised)
      n.fail(std::string(i == 1 ? "scale" : "bias") + " dims must equal the normalised input dims");
  const std::vector<int64_t> d2 = {outer, inner};
  const ValueId src = b.view(x, d2);
  // ONNX requires scale; the node pattern_fusion makes of a LayerNorm
  // written out without gamma has none (scale 1).
  auto flags = normalization_flags::none;
  std::optional<ValueId> scale, shift;
  if (n.has_input(1)) {
    scale = b.view(b.value_of(n.inputs[1]), {inner});
    flags = flags | normalization_flags::use_scale;
  }
  if (n.has_input(2)) {
    shift = b.view(b.value_of(n.inputs[2]), {inner});
    flags = flags | normalization_flags::use_shift;
  }
  dnnl::layer_normalization_forward::desc desc(dnnl::prop_kind::forward_inference, b.desc(src),
                                               n.attr_float("epsilon", 1e-5f), flags);
  dnnl::layer_normalization_forward::primitive_desc pd(desc, b.attr(), b.engine());
  const ValueId out = b.new_value(plain_desc(d), d, n.outputs[0]);
  std::vector<std::pair<int, ValueId>> args = {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, b.alias(out, plain_desc(d2), d2)}};
  if (scale) args.emplace_back(DNNL_ARG_SCALE, *scale);
  if (shift) args.emplace_back(DNNL_ARG_SHIFT, *shift);
  // Statistics are outputs of the primitive even for inference.
  if (pd.mean_desc().get_size() > 0) {
    args.emplace_back(DNNL_ARG_MEAN, b.new_value(pd.mean_desc(), {outer}));
    args.emplace_back(DNNL_ARG_VARIANCE, b.new_value(pd.variance_desc(), {outer}));
  }
  b.add_step(dnnl::layer_normalization_forward(pd), std::move(args), pd.scratchpad_desc(), n.label());
  b.define(n.outputs[0], out);
  return 0;
}

size_t build_softmax(ProgramBuilder& b, const NodeSpec& n, const Chain&) {
  const ValueId x = b.plain(b.value_of(n.inputs[0]));
  const std::vector<int64_t> d = b.dims(x);
  const int64_t rank = static_cast<int64_t>(d.size());
  int64_t axis = n.attr_int("axis", n.opset >= 13 ? -1 : 1);
  if (axis < 0) axis += rank;
  if (rank > 0 && (axis < 0 || axis >= rank)) n.fail("axis " + std::to_string(n.attr_int("axis", 1)) + " out of range for rank " + std::to_string(rank));
  // Before opset 13 Softmax flattens the input to 2-D at `axis` and
  // normalises each row: one softmax over axis 1 of that view. From 13 on
  // it normalises along `axis` alone.
  std::vector<int64_t> shape = d;
  int softmax_axis = static_cast<int>(axis);
  if (rank == 0) {
    shape = {1};
    softmax_axis = 0;
  } else if (n.opset < 13) {
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < rank; ++i) (i < axis ? outer : inner) *= d[static_cast<size_t>(i)];
    shape = {outer, inner};
    softmax_axis = 1;
  }
  const ValueId src = shape == d ? x : b.view(x, shape);
  dnnl::softmax_forward::desc desc(dnnl::prop_kind::forward_inference, b.desc(src), softmax_axis);
  dnnl::softmax_forward::primitive_desc pd(desc, b.attr(), b.engine());
  const ValueId out = b.new_value(plain_desc(d), d, n.outputs[0]);
  const ValueId dst = shape == d ? out : b.view(out, shape);
  b.add_step(dnnl::softmax_forward(pd), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}}, pd.scratchpad_desc(), n.label());
  b.define(n.outputs[0], out);
  return 0;
}

}  // namespace loom::onednn
