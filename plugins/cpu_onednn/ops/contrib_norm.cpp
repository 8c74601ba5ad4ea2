// com.microsoft SkipLayerNormalization(input, skip, gamma, beta?, bias?):
//   s = input + skip (+ bias)            -> output 3 (input_skip_bias_sum), optional
//   y = LayerNorm(s) over the last dim   -> output 0
// One oneDNN binary add (the bias as a binary post-op when oneDNN has an
// optimised kernel for it, else a second add), then the layer_normalization
// build_layer_norm makes. Outputs 1 / 2 (mean, inv_std_var) are never
// claimed (op_support). epsilon defaults to ORT's 1e-12.
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>

#include "ops/op_builders.h"
#include "ops/post_ops.h"

namespace loom::onednn {
namespace {

// skip as the reference EP accepts it: the input's shape, or its trailing
// dims after leading 1s (e.g. [1, S, H] or [S, H] for [B, S, H]); returned
// padded to the input's rank.
std::vector<int64_t> skip_dims(const NodeSpec& n, const std::vector<int64_t>& in, std::vector<int64_t> ss) {
  size_t lead = 0;
  while (lead + 1 < ss.size() && ss[lead] == 1) ++lead;
  bool ok = !ss.empty() && ss.size() <= in.size() && ss.back() == in.back();
  for (size_t i = 0; ok && i < ss.size() - lead; ++i) ok = ss[ss.size() - 1 - i] == in[in.size() - 1 - i];
  if (!ok) n.fail("skip must have the input's shape or its trailing dims (e.g. [1, S, H] or [S, H])");
  ss.insert(ss.begin(), in.size() - ss.size(), 1);
  return ss;
}

// dst = a + b (b broadcast), with an optional `post` operand added as a
// binary post-op; returns false when oneDNN has only a reference kernel for
// that post-op (the caller then adds it with a second step).
bool add_step(ProgramBuilder& b, const NodeSpec& n, ValueId a, ValueId c, std::optional<ValueId> post, ValueId dst) {
  dnnl::primitive_attr attr = b.attr();
  if (post) {
    dnnl::post_ops po;
    po.append_binary(dnnl::algorithm::binary_add, b.desc(*post));
    attr.set_post_ops(po);
  }
  dnnl::binary::desc d(dnnl::algorithm::binary_add, b.desc(a), b.desc(c), b.desc(dst));
  dnnl::binary::primitive_desc pd;
  try {
    pd = dnnl::binary::primitive_desc(d, attr, b.engine());
  } catch (const dnnl::error&) {
    if (post) return false;
    throw;
  }
  if (post && is_reference_impl(pd.impl_info_str())) return false;
  std::vector<std::pair<int, ValueId>> args = {{DNNL_ARG_SRC_0, a}, {DNNL_ARG_SRC_1, c}, {DNNL_ARG_DST, dst}};
  if (post) args.emplace_back(DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, *post);
  b.add_step(dnnl::binary(pd), std::move(args), pd.scratchpad_desc(), n.label());
  return true;
}

}  // namespace

size_t build_skip_layer_norm(ProgramBuilder& b, const NodeSpec& n, const Chain&) {
  const ValueId x = b.plain(b.value_of(n.inputs[0]));
  const std::vector<int64_t> d = b.dims(x);
  if (d.empty()) n.fail("input must have rank >= 1");
  const std::vector<int64_t> sd = skip_dims(n, d, b.dims(b.value_of(n.inputs[1])));
  // With a full-shape skip the add runs on [rows, H] views: the bias [1, H]
  // is then a per-channel broadcast, which oneDNN fuses as an optimised
  // post-op (a [1, 1, H] one on 3-D data gets only its reference kernel).
  const int64_t rows = element_count(d) / std::max<int64_t>(d.back(), 1);
  const std::vector<int64_t> ad = sd == d ? std::vector<int64_t>{rows, d.back()} : d;
  const ValueId skip = b.view(b.value_of(n.inputs[1]), sd == d ? ad : sd);
  const std::vector<int64_t> hidden = {d.back()};
  for (size_t i = 2; i <= 4; ++i)
    if (n.has_input(i) && b.dims(b.value_of(n.inputs[i])) != hidden)
      n.fail("gamma / beta / bias must be 1-D of the hidden size " + std::to_string(d.back()));
  std::optional<ValueId> bias;
  if (n.has_input(4)) {
    std::vector<int64_t> bd(ad.size(), 1);
    bd.back() = d.back();
    bias = b.view(b.value_of(n.inputs[4]), bd);
  }
  // The sum goes straight into output 3 when that is wanted.
  const bool sum_wanted = n.outputs.size() > 3 && !n.outputs[3].empty();
  const std::string sum_name = sum_wanted ? n.outputs[3] : n.outputs[0] + "/skip_sum";
  const ValueId sum = b.new_value(plain_desc(d), d, sum_wanted ? sum_name : "");
  const ValueId xa = b.view(x, ad), suma = b.alias(sum, plain_desc(ad), ad);
  if (!add_step(b, n, xa, skip, bias, suma)) {
    add_step(b, n, xa, skip, std::nullopt, suma);
    add_step(b, n, suma, *bias, std::nullopt, suma);  // in place
  }
  b.define(sum_name, sum);

  return build_last_dim_layer_norm(b, n, sum_name, n.inputs[2], n.has_input(3) ? n.inputs[3] : "", n.outputs[0],
                                   n.attr_float("epsilon", 1e-12f));
}

size_t build_last_dim_layer_norm(ProgramBuilder& b, const NodeSpec& n, const std::string& x, const std::string& gamma,
                                 const std::string& beta, const std::string& out, float epsilon) {
  // build_layer_norm on a node that reads `x` (same name, so errors still
  // point at `n`).
  NodeSpec ln;
  ln.op_type = "LayerNormalization";
  ln.name = n.name;
  ln.opset = 17;
  ln.inputs = {x, gamma, beta};
  ln.outputs = {out};
  ln.input_dtypes.assign(3, LOOM_DTYPE_FLOAT);
  ln.output_dtypes = {LOOM_DTYPE_FLOAT};
  ln.ints["axis"] = -1;
  ln.floats["epsilon"] = epsilon;
  return build_layer_norm(b, ln, {});
}

}  // namespace loom::onednn
