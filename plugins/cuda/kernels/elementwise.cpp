// Registration and host side of the element-wise kernels: shapes are known
// at launch, the work is queued on the step's stream.
#include "kernels/elementwise.h"

#include "cuda_check.h"
#include "cuda_device.h"

namespace loom::cuda {
namespace {

void relu(sdk::KernelContext& ctx) {
  sdk::ConstTensor x = ctx.required_input(0);
  sdk::Tensor y = ctx.output(0, x.shape(), LOOM_DTYPE_FLOAT);
  check(launch_relu(x.data<float>(), y.mutable_data<float>(), x.size(), native(ctx.stream())), "Relu launch");
}

template <bool kMul>
void binary(sdk::KernelContext& ctx) {
  sdk::ConstTensor a = ctx.required_input(0), b = ctx.required_input(1);
  LOOM_SDK_ENFORCE(a.shape() == b.shape(), std::string("cuda ") + (kMul ? "Mul" : "Add") +
                                                ": only equal shapes (no broadcasting yet)");
  sdk::Tensor y = ctx.output(0, a.shape(), LOOM_DTYPE_FLOAT);
  auto launch = kMul ? launch_mul : launch_add;
  check(launch(a.data<float>(), b.data<float>(), y.mutable_data<float>(), a.size(), native(ctx.stream())),
        kMul ? "Mul launch" : "Add launch");
}

}  // namespace

void register_elementwise_kernels(sdk::KernelRegistry& r) {
  const std::vector<sdk::TypeConstraintSpec> f = {{"T", {LOOM_DTYPE_FLOAT}}};
  r.add("", "Relu", 6, LOOM_OPSET_OPEN_END, relu, f).output_may_reuse_input(0, 0);
  r.add("", "Add", 7, LOOM_OPSET_OPEN_END, binary<false>, f).output_may_reuse_input(0, 0);
  r.add("", "Mul", 7, LOOM_OPSET_OPEN_END, binary<true>, f).output_may_reuse_input(0, 0);
}

bool elementwise_supports(const sdk::Node& node) {
  if (!node.domain().empty() || node.input_dtype(0) != LOOM_DTYPE_FLOAT) return false;
  if (node.op_type() == "Relu") return true;
  if (node.op_type() != "Add" && node.op_type() != "Mul") return false;
  auto a = node.input_shape(0), b = node.input_shape(1);
  if (!a || !b || *a != *b) return false;
  for (int64_t d : *a)
    if (d < 0) return false;
  return true;
}

}  // namespace loom::cuda
