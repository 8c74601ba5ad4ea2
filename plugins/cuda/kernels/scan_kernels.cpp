// CumSum (11+) on the CUDA EP: the axis is input 1, read on the host (a
// 0-D or 1-element int32 / int64 tensor); exclusive and reverse attributes.
#include <string>

#include "kernels/reduce_family.h"
#include "kernels/scan.h"

namespace loom::cuda {
namespace {

class CumSumKernel {
 public:
  CumSumKernel(const sdk::Node& node, const EpContext&)
      : exclusive_(node.attr_int("exclusive", 0) != 0), reverse_(node.attr_int("reverse", 0) != 0) {}

  void compute(sdk::KernelContext& ctx) const {
    sdk::ConstTensor x = ctx.required_input(0);
    const std::vector<int64_t> in = x.shape();
    if (in.empty()) throw sdk::Error("cuda CumSum: input must have rank >= 1", LOOM_STATUS_INVALID_ARGUMENT);
    ctx.required_input(1);
    const std::vector<int64_t> axis = host_int64s(ctx, 1);
    if (axis.size() != 1)
      throw sdk::Error("cuda CumSum: input 'axis' must hold one value, got " + std::to_string(axis.size()),
                       LOOM_STATUS_INVALID_ARGUMENT);
    const AxisRows rows = axis_rows(in, normalize_axis(axis[0], static_cast<int64_t>(in.size()), "CumSum"));
    sdk::Tensor y = ctx.output(0, in, x.dtype());
    if (y.size() == 0) return;
    check_family_launch(
        launch_cumsum(exclusive_, reverse_, x.dtype(), x.raw_data(), y.raw_mutable_data(), rows, stream_of(ctx)),
        "CumSum", x.dtype());
  }

 private:
  bool exclusive_, reverse_;
};

}  // namespace

void register_scan_kernels(KernelTable& t) {
  t.add<CumSumKernel>("", "CumSum", 11, LOOM_OPSET_OPEN_END, {{"T", kFloat3IntTypes}}).input_on_host(1);
}

}  // namespace loom::cuda
