// Post-op chains: trailing element-wise and binary nodes folded into the
// primitive before them (eltwise, sum and binary post-ops).
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "eltwise_ops.h"
#include "ops/op_builders.h"

namespace loom::onednn {

struct PostOp {
  enum Kind { kEltwise, kSum, kBinary } kind = kEltwise;
  EltwiseStep eltwise{dnnl::algorithm::eltwise_relu};
  dnnl::algorithm binary_alg = dnnl::algorithm::binary_add;
  // Sum: dst = sum_scale * (dst_before - sum_zero_point) + result (1 and 0
  // for a float Add; a quantized residual's r_scale / out_scale and r's
  // zero point, see qlinear_conv.cpp).
  float sum_scale = 1.f;
  int32_t sum_zero_point = 0;
  // Sum operand; binary operand padded to the dst rank, in whatever layout it
  // has (bind_post_ops converts it to operand_desc when needed).
  ValueId operand = 0;
  // Binary operand as the primitive reads it: laid out like the dst
  // (desc_like), set by create_with_post_ops once the dst layout is known.
  dnnl::memory::desc operand_desc;
  size_t node_index = 0;  // chain position of the node this post-op comes from
  const NodeSpec* node = nullptr;  // the node this post-op comes from
};

// The most post-ops one oneDNN primitive takes (its post_ops_limit).
constexpr size_t kMaxPostOps = 32;

// Post-ops for the longest prefix of `chain` expressible on a result with
// dims `dst_dims` whose first value is `start` (the anchor's output name).
// A full-shape Add becomes a sum post-op when `allow_sum` (the primitive's
// dst is then pre-filled with the operand), other operands binary post-ops.
std::vector<PostOp> plan_post_ops(ProgramBuilder& b, const Chain& chain, const std::string& start,
                                  const std::vector<int64_t>& dst_dims, bool allow_sum);

// Whether the first `n` post-ops end between nodes (a node may need several
// post-ops; a prefix never splits one).
inline bool ends_between_nodes(const std::vector<PostOp>& ops, size_t n) {
  return n == 0 || n >= ops.size() || ops[n - 1].node_index != ops[n].node_index;
}
dnnl::post_ops make_post_ops(const std::vector<PostOp>& ops, size_t count);

// Whether oneDNN's implementation name is one of its reference kernels.
inline bool is_reference_impl(const char* impl) { return std::string(impl).rfind("ref", 0) == 0; }

// Sets each binary post-op's operand_desc to the layout of `dst` (a layout
// mismatch makes oneDNN fall back to its reference kernels).
void match_binary_operands(std::vector<PostOp>& ops, const dnnl::memory::desc& dst);

// Creates a primitive descriptor with as many post-ops as oneDNN accepts:
// tries all of `ops`, then shorter prefixes. `make` builds the pd for the
// given attributes and dst desc and throws dnnl::error when unsupported.
// Binary operands follow the dst layout, so when `dst` is format `any` and
// there are binary post-ops, the primitive first picks its dst without
// post-ops and that layout is then fixed. Returns the pd and sets `used` to
// the number of post-ops it carries.
template <class PD>
PD create_with_post_ops(ProgramBuilder& b, std::vector<PostOp>& ops, size_t& used, dnnl::memory::desc dst,
                        const std::function<PD(const dnnl::primitive_attr&, const dnnl::memory::desc&)>& make) {
  bool binary = false;
  for (const PostOp& op : ops) binary |= op.kind == PostOp::kBinary;
  if (binary) {
    if (dst.data.format_kind == dnnl_format_kind_any) dst = make(b.attr(), dst).dst_desc();
    match_binary_operands(ops, dst);
  }
  // Longest prefix with an optimised kernel; a reference kernel (`ref`)
  // only when no prefix has one: some broadcasts are optimised standalone
  // but not as post-ops, and the rest of the chain is then built standalone.
  std::optional<PD> ref_pd;
  size_t ref_used = 0;
  for (size_t n = ops.size() + 1; n-- > 0;) {
    if (!ends_between_nodes(ops, n)) continue;
    dnnl::primitive_attr attr = b.attr();
    if (n > 0) attr.set_post_ops(make_post_ops(ops, n));
    try {
      PD pd = make(attr, dst);
      if (!is_reference_impl(pd.impl_info_str())) {
        used = n;
        return pd;
      }
      if (!ref_pd) {
        ref_pd = pd;
        ref_used = n;
      }
    } catch (const dnnl::error&) {
      if (n == 0 && !ref_pd) throw;
    }
  }
  if (ref_pd) {
    used = ref_used;
    return *ref_pd;
  }
  throw dnnl::error(dnnl_unimplemented, "no primitive descriptor");
}

// The sum post-op among the first `used` post-ops, if any.
const PostOp* sum_post_op(const std::vector<PostOp>& ops, size_t used);

// The layout the primitive's dst should have so that the sum operand can be
// its dst without a copy: the operand's own layout when it can be overwritten
// in place (see sum_destination) and has dims `dst_dims`; else nullopt.
std::optional<dnnl::memory::desc> in_place_sum_desc(ProgramBuilder& b, const std::vector<PostOp>& ops, size_t used);

// The dst value for a primitive with post-ops `ops[0, used)` and dst layout
// `desc`: with a sum post-op whose operand has exactly `desc`, may be
// overwritten (ProgramBuilder::can_overwrite) and whose result `name` is not a
// partition output, the operand's own bytes, so the primitive accumulates in
// place; otherwise a new value (bind_post_ops then copies the operand in).
ValueId sum_destination(ProgramBuilder& b, const std::vector<PostOp>& ops, size_t used,
                        const dnnl::memory::desc& desc, const std::vector<int64_t>& dims, const std::string& name);

// Adds the post-ops' operands to a step's arguments, each binary operand in
// the layout of `dst` (a reorder when it has another, done once for
// constants); for a sum post-op whose
// operand is not already `dst`'s bytes, first appends the step that copies
// the operand into `dst` (converting its layout if needed).
void bind_post_ops(ProgramBuilder& b, const std::vector<PostOp>& ops, size_t used, ValueId dst,
                   std::vector<std::pair<int, ValueId>>& args, const std::string& label);

// Defines the output of the last absorbed chain node (or of `n` when none)
// as `dst`; returns the number of chain nodes absorbed.
size_t finish_chain(ProgramBuilder& b, const NodeSpec& n, const Chain& chain, const std::vector<PostOp>& ops,
                    size_t used, ValueId dst);

// The name under which the result is a partition output, if any: the last
// absorbed node's output.
std::string result_name(const NodeSpec& n, const Chain& chain, const std::vector<PostOp>& ops, size_t used);

}  // namespace loom::onednn
