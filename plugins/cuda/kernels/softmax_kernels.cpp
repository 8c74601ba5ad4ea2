// Softmax and LogSoftmax on the CUDA EP. Before opset 13 the input is
// coerced to 2-D at `axis` (default 1; axis == rank allowed) and each row
// of the second dim is normalised; from 13 the op runs along `axis`
// (default -1).
#include <string>

#include "kernels/reduce_family.h"
#include "kernels/softmax.h"

namespace loom::cuda {
namespace {

class SoftmaxKernel {
 public:
  SoftmaxKernel(const sdk::Node& node, const EpContext&)
      : name_(node.op_type()), log_(name_ == "LogSoftmax"), coerce_2d_(node.opset() < 13),
        axis_(node.attr_int("axis", coerce_2d_ ? 1 : -1)) {}

  void compute(sdk::KernelContext& ctx) const {
    sdk::ConstTensor x = ctx.required_input(0);
    const std::vector<int64_t> in = x.shape();
    const int64_t rank = static_cast<int64_t>(in.size());
    AxisRows rows;  // a scalar is one row of one element
    if (rank > 0 && coerce_2d_) {
      rows = coerced_rows(in, axis_ == rank ? rank : normalize_axis(axis_, rank, name_));
    } else if (rank > 0) {
      rows = axis_rows(in, normalize_axis(axis_, rank, name_));
    }
    sdk::Tensor y = ctx.output(0, in, x.dtype());
    if (y.size() == 0) return;
    check_family_launch(launch_softmax(log_, x.dtype(), x.raw_data(), y.raw_mutable_data(), rows, stream_of(ctx)),
                        name_, x.dtype());
  }

 private:
  std::string name_;
  bool log_, coerce_2d_;
  int64_t axis_;
};

}  // namespace

void register_softmax_kernels(KernelTable& t) {
  constexpr int kOpen = LOOM_OPSET_OPEN_END;
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    t.add<SoftmaxKernel>("", op, 1, 12, {{"T", kFloat3Types}});
    t.add<SoftmaxKernel>("", op, 13, kOpen, {{"T", kFloat3Types}});
  }
}

}  // namespace loom::cuda
