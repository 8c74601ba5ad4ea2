// TopK on the CUDA EP: k from the attribute (opset 1-9) or input 1 read on
// the host (10+); largest and sorted from 11 (results are always sorted,
// as the reference's are). Outputs the values and their int64 indices.
#include <string>

#include "kernels/reduce_family.h"
#include "kernels/topk.h"

namespace loom::cuda {
namespace {

class TopKKernel {
 public:
  TopKKernel(const sdk::Node& node, const EpContext&)
      : k_input_(node.opset() >= 10), k_attr_(k_input_ ? 0 : node.required_int("k")), axis_(node.attr_int("axis", -1)),
        largest_(node.opset() < 11 || node.attr_int("largest", 1) != 0) {}

  void compute(sdk::KernelContext& ctx) const {
    sdk::ConstTensor x = ctx.required_input(0);
    const std::vector<int64_t> in = x.shape();
    if (in.empty()) throw sdk::Error("cuda TopK: input must have rank >= 1", LOOM_STATUS_INVALID_ARGUMENT);
    const int64_t axis = normalize_axis(axis_, static_cast<int64_t>(in.size()), "TopK");
    const AxisRows rows = axis_rows(in, axis);
    const int64_t k = this->k(ctx);
    if (k < 0 || k > rows.n)
      throw sdk::Error("cuda TopK: k = " + std::to_string(k) + " is out of range for axis " + std::to_string(axis) +
                           " of size " + std::to_string(rows.n),
                       LOOM_STATUS_INVALID_ARGUMENT);
    if (!topk_size_supported(rows))
      throw sdk::Error("cuda TopK: " + std::to_string(rows.rows()) + " rows of " + std::to_string(rows.n) +
                           " elements are more than one sort handles",
                       LOOM_STATUS_NOT_IMPLEMENTED);
    std::vector<int64_t> out_dims = in;
    out_dims[static_cast<size_t>(axis)] = k;
    sdk::Tensor values = ctx.output(0, out_dims, x.dtype());
    sdk::Tensor indices = ctx.output_count() > 1 ? ctx.output(1, out_dims, LOOM_DTYPE_INT64) : sdk::Tensor();
    if (values.size() == 0) return;
    size_t bytes = 0;
    check_family_launch(topk_scratch_bytes(x.dtype(), rows, &bytes), "TopK", x.dtype());
    void* scratch = bytes > 0 ? stream_resources(ctx).scratch(bytes, 0) : nullptr;
    int64_t* pi = indices.exists() ? indices.mutable_data<int64_t>() : nullptr;
    check_family_launch(launch_topk(largest_, x.dtype(), x.raw_data(), values.raw_mutable_data(), pi, rows, k,
                                    scratch, bytes, stream_of(ctx)),
                        "TopK", x.dtype());
  }

 private:
  int64_t k(const sdk::KernelContext& ctx) const {
    if (!k_input_) return k_attr_;
    ctx.required_input(1);
    const std::vector<int64_t> v = host_int64s(ctx, 1);
    if (v.size() != 1)
      throw sdk::Error("cuda TopK: input 'K' must hold one value, got " + std::to_string(v.size()),
                       LOOM_STATUS_INVALID_ARGUMENT);
    return v[0];
  }

  bool k_input_;
  int64_t k_attr_, axis_;
  bool largest_;
};

}  // namespace

void register_topk_kernels(KernelTable& t) {
  t.add<TopKKernel>("", "TopK", 1, 9, {{"T", kFloat3IntTypes}});
  t.add<TopKKernel>("", "TopK", 10, LOOM_OPSET_OPEN_END, {{"T", kFloat3IntTypes}}).input_on_host(1);
}

}  // namespace loom::cuda
