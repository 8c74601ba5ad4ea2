#include "ops/post_ops.h"

#include "ops/operand_layout.h"

namespace loom::onednn {
namespace {

// Whether an operand of dims `d` broadcasts into `dst` without growing it.
bool broadcasts_into(const std::vector<int64_t>& d, const std::vector<int64_t>& dst) {
  if (d.size() > dst.size()) return false;
  const size_t off = dst.size() - d.size();
  for (size_t i = 0; i < d.size(); ++i)
    if (d[i] != 1 && d[i] != dst[off + i]) return false;
  return true;
}

std::vector<int64_t> padded_to_rank(const std::vector<int64_t>& d, size_t rank) {
  std::vector<int64_t> out(rank - d.size(), 1);
  out.insert(out.end(), d.begin(), d.end());
  return out;
}

size_t absorbed_nodes(const std::vector<PostOp>& ops, size_t used) {
  return used == 0 ? 0 : ops[used - 1].node_index + 1;
}

}  // namespace

std::vector<PostOp> plan_post_ops(ProgramBuilder& b, const Chain& chain, const std::string& start,
                                  const std::vector<int64_t>& dst_dims, bool allow_sum) {
  std::vector<PostOp> ops;
  std::string current = start;
  bool sum_used = !allow_sum;
  for (size_t k = 0; k < chain.size(); ++k) {
    const NodeSpec& c = *chain[k];
    // A node's post-ops go in whole or not at all, and never past what
    // oneDNN takes (more made append_binary fail on a chain of 33 Adds).
    if (ops.size() >= kMaxPostOps) break;
    const size_t before = ops.size();
    if (auto steps = eltwise_steps_for(c)) {
      for (const EltwiseStep& s : *steps) {
        PostOp op;
        op.kind = PostOp::kEltwise;
        op.eltwise = s;
        op.node_index = k;
        op.node = &c;
        ops.push_back(op);
      }
    } else if (auto alg = bias_activation_for(c) ? std::optional<dnnl::algorithm>(dnnl::algorithm::binary_add)
                                                   : binary_algorithm_for(c)) {
      // BiasGelu / FastGelu(bias): the add, then its eltwise steps (same node).
      const auto after = bias_activation_for(c).value_or(std::vector<EltwiseStep>{});
      const std::string& other_name = c.inputs[0] == current ? c.inputs[1] : c.inputs[0];
      if (!b.defined(other_name)) break;
      const ValueId other = b.value_of(other_name);
      if (!broadcasts_into(b.dims(other), dst_dims)) break;
      PostOp op;
      op.node_index = k;
      op.node = &c;
      op.binary_alg = *alg;
      if (*alg == dnnl::algorithm::binary_add && b.dims(other) == dst_dims && !sum_used) {
        op.kind = PostOp::kSum;
        op.operand = other;
        sum_used = true;
      } else {
        op.kind = PostOp::kBinary;
        // Same rank: keep the operand's own layout (a view would make it
        // plain); bind_post_ops converts it to the dst layout if needed.
        op.operand = b.dims(other).size() == dst_dims.size()
                         ? other
                         : b.view(other, padded_to_rank(b.dims(other), dst_dims.size()));
        op.operand_desc = b.desc(op.operand);
      }
      ops.push_back(op);
      for (const EltwiseStep& st : after) {
        PostOp e;
        e.kind = PostOp::kEltwise;
        e.eltwise = st;
        e.node_index = k;
        e.node = &c;
        ops.push_back(e);
      }
    } else {
      break;
    }
    if (ops.size() > kMaxPostOps) {
      ops.resize(before);
      break;
    }
    current = c.outputs[0];
  }
  return ops;
}

dnnl::post_ops make_post_ops(const std::vector<PostOp>& ops, size_t count) {
  dnnl::post_ops po;
  for (size_t i = 0; i < count; ++i) {
    const PostOp& op = ops[i];
    switch (op.kind) {
      case PostOp::kEltwise: po.append_eltwise(1.f, op.eltwise.alg, op.eltwise.alpha, op.eltwise.beta); break;
      case PostOp::kSum:
        if (op.sum_zero_point != 0) po.append_sum(op.sum_scale, op.sum_zero_point);
        else po.append_sum(op.sum_scale);
        break;
      case PostOp::kBinary: po.append_binary(op.binary_alg, op.operand_desc); break;
    }
  }
  return po;
}

void match_binary_operands(std::vector<PostOp>& ops, const dnnl::memory::desc& dst) {
  for (PostOp& op : ops)
    if (op.kind == PostOp::kBinary) op.operand_desc = desc_like(dst, op.operand_desc.dims());
}

const PostOp* sum_post_op(const std::vector<PostOp>& ops, size_t used) {
  for (size_t i = 0; i < used && i < ops.size(); ++i)
    if (ops[i].kind == PostOp::kSum) return &ops[i];
  return nullptr;
}

std::optional<dnnl::memory::desc> in_place_sum_desc(ProgramBuilder& b, const std::vector<PostOp>& ops, size_t used) {
  const PostOp* sum = sum_post_op(ops, used);
  if (sum == nullptr || !b.can_overwrite(sum->operand, *sum->node)) return std::nullopt;
  return b.desc(sum->operand);
}

ValueId sum_destination(ProgramBuilder& b, const std::vector<PostOp>& ops, size_t used,
                        const dnnl::memory::desc& desc, const std::vector<int64_t>& dims, const std::string& name) {
  const PostOp* sum = sum_post_op(ops, used);
  if (sum != nullptr && !b.is_partition_output(name) && b.desc(sum->operand) == desc &&
      b.dims(sum->operand) == dims && b.can_overwrite(sum->operand, *sum->node))
    return b.alias(sum->operand, desc, dims);
  return b.new_value(desc, dims, name);
}

void bind_post_ops(ProgramBuilder& b, const std::vector<PostOp>& ops, size_t used, ValueId dst,
                   std::vector<std::pair<int, ValueId>>& args, const std::string& label) {
  for (size_t i = 0; i < used; ++i) {
    const PostOp& op = ops[i];
    if (op.kind == PostOp::kBinary)
      args.emplace_back(DNNL_ARG_ATTR_MULTIPLE_POST_OP(static_cast<int>(i)) | DNNL_ARG_SRC_1,
                        b.require(op.operand, desc_like(b.desc(dst), op.operand_desc.dims())));
    else if (op.kind == PostOp::kSum && !b.same_buffer(op.operand, dst))
      b.add_reorder(op.operand, dst, label + " (residual for sum post-op)");
  }
}

size_t finish_chain(ProgramBuilder& b, const NodeSpec& n, const Chain& chain, const std::vector<PostOp>& ops,
                    size_t used, ValueId dst) {
  b.define(result_name(n, chain, ops, used), dst);
  return absorbed_nodes(ops, used);
}

std::string result_name(const NodeSpec& n, const Chain& chain, const std::vector<PostOp>& ops, size_t used) {
  const size_t absorbed = absorbed_nodes(ops, used);
  return absorbed == 0 ? n.outputs[0] : chain[absorbed - 1]->outputs[0];
}

}  // namespace loom::onednn
