// ReduceMean / ReduceSum / ReduceMax / ReduceMin / ReduceL2 over float32 as
// one oneDNN reduction primitive: the reduced dims are kept as 1 in oneDNN's
// destination, and keepdims = 0 is a view of it without them. The axes come
// from the attribute (before opset 18; ReduceSum before 13) or a constant
// input; no axes reduce every dim, unless noop_with_empty_axes asks for the
// input itself, which is left to the reference EP. Torch's x.mean((2, 3)) in
// squeeze-and-excitation blocks, and the mean of a LayerNorm written out in
// ways the core's fusion does not match, stay in the partition.
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <set>

#include "op_support.h"
#include "ops/op_builders.h"

namespace loom::onednn {
namespace {

std::optional<dnnl::algorithm> reduce_algorithm(const std::string& op) {
  if (op == "ReduceMean") return dnnl::algorithm::reduction_mean;
  if (op == "ReduceSum") return dnnl::algorithm::reduction_sum;
  if (op == "ReduceMax") return dnnl::algorithm::reduction_max;
  if (op == "ReduceMin") return dnnl::algorithm::reduction_min;
  if (op == "ReduceL2") return dnnl::algorithm::reduction_norm_lp_sum;
  return std::nullopt;
}

// Axes as ONNX gives them: the attribute, or the constant input 1 from the
// opset where it moved there. nullopt when they come at run time.
std::optional<std::vector<int64_t>> reduce_axes(const NodeSpec& n) {
  return n.ints_operand(1, "axes", n.op_type == "ReduceSum" ? 13 : 18);
}

// The reduced dims of a rank-`rank` input, normalised; empty axes: all.
// nullopt on an axis out of range or given twice.
std::optional<std::set<size_t>> reduced_dims(const std::vector<int64_t>& axes, size_t rank) {
  std::set<size_t> out;
  if (axes.empty()) {
    for (size_t d = 0; d < rank; ++d) out.insert(d);
    return out;
  }
  for (int64_t a : axes) {
    const int64_t r = static_cast<int64_t>(rank);
    if (a < -r || a >= r) return std::nullopt;
    if (!out.insert(static_cast<size_t>(a < 0 ? a + r : a)).second) return std::nullopt;
  }
  return out;
}

}  // namespace

bool is_reduce_op(const NodeSpec& n) { return reduce_algorithm(n.op_type).has_value(); }

SupportVerdict check_reduce(const NodeSpec& n) {
  const auto rank = n.input_rank(0);
  if (!rank || *rank < 1 || *rank > 6) return {OpRole::kUnsupported, "rank must be known and 1..6"};
  const auto axes = reduce_axes(n);
  if (!axes) return {OpRole::kUnsupported, "axes must be a constant"};
  if (axes->empty() && n.attr_int("noop_with_empty_axes", 0) != 0)
    return {OpRole::kUnsupported, "noop_with_empty_axes with no axes (the input itself)"};
  if (!reduced_dims(*axes, *rank)) return {OpRole::kUnsupported, "axes out of range or repeated"};
  return {OpRole::kCompute, {}};
}

size_t build_reduce(ProgramBuilder& b, const NodeSpec& n, const Chain&) {
  const ValueId x = b.value_of(n.inputs[0]);
  const std::vector<int64_t> dims = b.dims(x);
  const auto axes = reduce_axes(n);
  if (!axes) n.fail("axes must be a constant");
  const auto reduced = reduced_dims(*axes, dims.size());
  if (!reduced || dims.empty() || dims.size() > 6) n.fail("axes out of range or repeated, or a rank outside 1..6");
  std::vector<int64_t> kept = dims, squeezed;  // oneDNN's dst dims, and keepdims = 0's
  for (size_t d = 0; d < dims.size(); ++d) {
    if (reduced->count(d)) kept[d] = 1;
    else squeezed.push_back(dims[d]);
  }
  const dnnl::algorithm alg = *reduce_algorithm(n.op_type);
  // ReduceL2 is sqrt(sum(x^2)): oneDNN's norm_lp_sum with p = 2.
  const float p = alg == dnnl::algorithm::reduction_norm_lp_sum ? 2.f : 0.f;
  const ValueId src = b.plain(x);
  const dnnl::reduction::primitive_desc pd(dnnl::reduction::desc(alg, b.desc(src), plain_desc(kept), p, 0.f),
                                           b.attr(), b.engine());
  const bool keepdims = n.attr_int("keepdims", 1) != 0;
  const ValueId dst = b.new_value(pd.dst_desc(), kept, n.outputs[0]);
  b.add_step(dnnl::reduction(pd), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}}, pd.scratchpad_desc(), n.label());
  b.define(n.outputs[0], keepdims ? dst : b.view(dst, squeezed));
  return 0;
}

}  // namespace loom::onednn
