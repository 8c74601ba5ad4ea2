// The reductions on the CUDA EP: ReduceSum / Mean / Max / Min / Prod / L1 /
// L2 / SumSquare / LogSum / LogSumExp over any axes (attribute, or a host
// input from opset 13 for ReduceSum and 18 for the others, with
// noop_with_empty_axes), ArgMax / ArgMin; and the registration of the whole
// reduction family (softmax, TopK and CumSum register from their files).
#include <algorithm>
#include <map>
#include <string>

#include "kernels/families.h"
#include "kernels/reduce.h"
#include "kernels/reduce_family.h"

namespace loom::cuda {
namespace {

ReduceOp reduce_op(const std::string& op) {
  static const std::map<std::string, ReduceOp> ops = {
      {"ReduceSum", ReduceOp::kSum},         {"ReduceMean", ReduceOp::kMean},
      {"ReduceMax", ReduceOp::kMax},         {"ReduceMin", ReduceOp::kMin},
      {"ReduceProd", ReduceOp::kProd},       {"ReduceL1", ReduceOp::kL1},
      {"ReduceL2", ReduceOp::kL2},           {"ReduceSumSquare", ReduceOp::kSumSquare},
      {"ReduceLogSum", ReduceOp::kLogSum},   {"ReduceLogSumExp", ReduceOp::kLogSumExp}};
  auto it = ops.find(op);
  if (it == ops.end()) throw sdk::Error("cuda: no reduction " + op, LOOM_STATUS_NOT_IMPLEMENTED);
  return it->second;
}

// The opset from which the op takes its axes as input 1 instead of an attribute.
int axes_input_since(const std::string& op) { return op == "ReduceSum" ? 13 : 18; }

class ReduceKernel {
 public:
  ReduceKernel(const sdk::Node& node, const EpContext&)
      : name_(node.op_type()), op_(reduce_op(name_)), keepdims_(node.attr_int("keepdims", 1) != 0),
        axes_from_input_(node.opset() >= axes_input_since(name_)),
        noop_with_empty_axes_(node.attr_int("noop_with_empty_axes", 0) != 0) {
    if (!axes_from_input_) attr_axes_ = node.attr_ints("axes");
  }

  void compute(sdk::KernelContext& ctx) const {
    sdk::ConstTensor x = ctx.required_input(0);
    const std::vector<int64_t> in = x.shape();
    const std::vector<int64_t> axes = axes_from_input_ ? host_int64s(ctx, 1) : attr_axes_;
    // Empty axes reduce everything, or nothing when noop_with_empty_axes
    // applies (axes given as an input): each output then reduces its one
    // element (ReduceSumSquare squares it), as the reference does.
    const ReducePlan plan = planned(name_, [&] {
      return plan_reduce(in, reduced_dims(axes, static_cast<int64_t>(in.size()),
                                          axes_from_input_ && noop_with_empty_axes_),
                         keepdims_);
    });
    element_count(plan.out_dims, "cuda " + name_ + " output");
    sdk::Tensor y = ctx.output(0, plan.out_dims, x.dtype());
    if (y.size() == 0) return;
    check_family_launch(launch_reduce(op_, x.dtype(), x.raw_data(), y.raw_mutable_data(), plan.maps, stream_of(ctx)),
                        name_, x.dtype());
  }

 private:
  std::string name_;
  ReduceOp op_;
  bool keepdims_, axes_from_input_, noop_with_empty_axes_;
  std::vector<int64_t> attr_axes_;
};

// ArgMax / ArgMin: int64 indices along `axis` (default 0), keepdims, and
// select_last_index (opset 12+).
class ArgKernel {
 public:
  ArgKernel(const sdk::Node& node, const EpContext&)
      : name_(node.op_type()), is_max_(name_ == "ArgMax"), axis_(node.attr_int("axis", 0)),
        keepdims_(node.attr_int("keepdims", 1) != 0), select_last_(node.attr_int("select_last_index", 0) != 0) {}

  void compute(sdk::KernelContext& ctx) const {
    sdk::ConstTensor x = ctx.required_input(0);
    const std::vector<int64_t> in = x.shape();
    const int64_t axis = normalize_axis(axis_, static_cast<int64_t>(in.size()), name_);
    const AxisRows rows = axis_rows(in, axis);
    if (rows.n == 0 && rows.rows() > 0)
      throw sdk::Error("cuda " + name_ + ": cannot reduce over axis " + std::to_string(axis_) + " of size 0",
                       LOOM_STATUS_INVALID_ARGUMENT);
    sdk::Tensor y = ctx.output(0, axis_output_dims(in, axis, keepdims_), LOOM_DTYPE_INT64);
    if (y.size() == 0) return;
    check_family_launch(launch_arg_reduce(is_max_, select_last_, x.dtype(), x.raw_data(),
                                          y.mutable_data<int64_t>(), rows, stream_of(ctx)),
                        name_, x.dtype());
  }

 private:
  std::string name_;
  bool is_max_;
  int64_t axis_;
  bool keepdims_, select_last_;
};

// Claim check of ReduceL2 / ReduceLogSum / ReduceLogSumExp, which run on
// float types only. Their type constraint lists the integers too: a host
// whose ONNX library lacks these ops' opset-18 schemas matches the nodes
// against opset 13's, which has no axes input, so the variadic-tail rule
// checks the int64 axes against T.
std::string float_reduction(const sdk::Node& node) {
  const int32_t d = node.input_dtype(0);
  if (d != LOOM_DTYPE_UNDEFINED && std::find(kFloat3Types.begin(), kFloat3Types.end(), d) == kFloat3Types.end())
    return "no cuda kernel for " + std::string(node.op_type()) + " on " + sdk::dtype_name(d);
  return input_rank_fits(node);
}

}  // namespace

void register_reduce_kernels(KernelTable& t) {
  constexpr int kOpen = LOOM_OPSET_OPEN_END;
  // The integer types where the op has an exact integer meaning here; the
  // log / root ones take float types only (float_reduction).
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
                         "ReduceSumSquare", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp"}) {
    const SupportCheck check = reduce_op_takes_integers(reduce_op(op)) ? input_rank_fits : float_reduction;
    const int since = axes_input_since(op);
    t.add<ReduceKernel>("", op, 1, since - 1, {{"T", kFloat3IntTypes}}, check);
    t.add<ReduceKernel>("", op, since, kOpen, {{"T", kFloat3IntTypes}}, check).input_on_host(1);
  }
  for (const char* op : {"ArgMax", "ArgMin"}) t.add<ArgKernel>("", op, 1, kOpen, {{"T", kFloat3IntTypes}});

  register_softmax_kernels(t);
  register_topk_kernels(t);
  register_scan_kernels(t);
}

}  // namespace loom::cuda
