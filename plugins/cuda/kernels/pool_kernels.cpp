// Pooling on the CUDA EP with our own kernels (kernels/pool.h): MaxPool
// (float types, int8, uint8; not its Indices output), AveragePool and
// LpPool over 1 to 3 spatial dims with pads, strides, dilations, auto_pad
// and ceil_mode resolved as the reference EP does (loom/sdk/window.h),
// and GlobalMaxPool / GlobalAveragePool / GlobalLpPool.
#include <string>
#include <vector>

#include "kernel_table.h"
#include "kernels/conv_node.h"
#include "kernels/kernel_support.h"
#include "kernels/pool.h"

namespace loom::cuda {
namespace {

const std::vector<int32_t> kPoolFloats = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_FLOAT16, LOOM_DTYPE_DOUBLE};
const std::vector<int32_t> kMaxPoolTypes = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_FLOAT16, LOOM_DTYPE_DOUBLE, LOOM_DTYPE_INT8,
                                            LOOM_DTYPE_UINT8};

PoolKind kind_of(const std::string& op) {
  if (op == "MaxPool" || op == "GlobalMaxPool") return PoolKind::kMax;
  if (op == "AveragePool" || op == "GlobalAveragePool") return PoolKind::kAverage;
  return PoolKind::kLp;
}

// LpPool-1 / GlobalLpPool-1 have a float `p`, later versions an int.
float lp_exponent(const sdk::Node& n) {
  if (n.attr_type("p") == LOOM_ATTR_FLOAT) return n.attr_float("p", 2.f);
  return static_cast<float>(n.attr_int("p", 2));
}

void check_launch_result(cudaError_t e, const std::string& op, int32_t dtype) {
  if (e == cudaErrorInvalidValue)
    throw sdk::Error("cuda " + op + ": no kernel for " + sdk::dtype_name(dtype), LOOM_STATUS_NOT_IMPLEMENTED);
  check(e, (op + " launch").c_str());
}

class PoolKernel {
 public:
  PoolKernel(const sdk::Node& n, const EpContext&)
      : op_(n.op_type()), attrs_(sdk::window_attrs_of(n, "cuda " + op_)) {
    params_.kind = kind_of(op_);
    params_.count_include_pad = n.attr_int("count_include_pad", 0) != 0;
    if (params_.kind == PoolKind::kLp) params_.p = lp_exponent(n);
  }

  void compute(sdk::KernelContext& ctx) const {
    const sdk::ConstTensor x = ctx.required_input(0);
    const Dims xs = x.shape();
    if (xs.size() < 3)
      throw sdk::Error("cuda " + op_ + ": input must have rank >= 3, got " + std::to_string(xs.size()),
                       LOOM_STATUS_INVALID_ARGUMENT);
    const Window g = sdk::resolve_window(attrs_, Dims(xs.begin() + 2, xs.end()), {}, "cuda " + op_);
    Dims ys{xs[0], xs[1]};
    ys.insert(ys.end(), g.out.begin(), g.out.end());
    const int64_t planes = sdk::checked_mul(xs[0], xs[1], "cuda " + op_ + " planes");
    const PoolGeometry pg = with_geometry_errors(op_, [&] { return make_pool_geometry(g, planes); });
    (void)element_count(ys, "cuda " + op_ + " output");
    sdk::Tensor y = ctx.output(0, ys, x.dtype());
    check_launch_result(launch_pool(x.dtype(), pg, params_, x.raw_data(), y.raw_mutable_data(), stream_of(ctx)), op_,
                        x.dtype());
  }

 private:
  std::string op_;
  WindowAttrs attrs_;
  PoolParams params_;
};

class GlobalPoolKernel {
 public:
  GlobalPoolKernel(const sdk::Node& n, const EpContext&) : op_(n.op_type()), kind_(kind_of(op_)) {
    if (kind_ == PoolKind::kLp) p_ = lp_exponent(n);
  }

  void compute(sdk::KernelContext& ctx) const {
    const sdk::ConstTensor x = ctx.required_input(0);
    const Dims xs = x.shape();
    if (xs.size() < 2)
      throw sdk::Error("cuda " + op_ + ": input must have rank >= 2, got " + std::to_string(xs.size()),
                       LOOM_STATUS_INVALID_ARGUMENT);
    Dims ys(xs.size(), 1);
    ys[0] = xs[0];
    ys[1] = xs[1];
    const int64_t planes = element_count(ys, "cuda " + op_ + " output");
    const int64_t spatial = element_count(Dims(xs.begin() + 2, xs.end()), "cuda " + op_ + " input");
    sdk::Tensor y = ctx.output(0, ys, x.dtype());
    check_launch_result(
        launch_global_pool(x.dtype(), kind_, p_, planes, spatial, x.raw_data(), y.raw_mutable_data(), stream_of(ctx)),
        op_, x.dtype());
  }

 private:
  std::string op_;
  PoolKind kind_;
  float p_ = 2.f;
};

std::string pool_supported(const sdk::Node& node) {
  if (node.attr_ints("kernel_shape").empty()) return "kernel_shape is missing";
  if (node.op_type() == "MaxPool" && node.output_count() > 1 && !node.output_name(1).empty())
    return "the Indices output is not supported";
  return window_node_supported(node, 3, 5);
}

}  // namespace

void register_pool_kernels(KernelTable& t) {
  constexpr int kOpen = LOOM_OPSET_OPEN_END;
  t.add<PoolKernel>("", "MaxPool", 1, kOpen, {{"T", kMaxPoolTypes}}, pool_supported);
  t.add<PoolKernel>("", "AveragePool", 1, kOpen, {{"T", kPoolFloats}}, pool_supported);
  t.add<PoolKernel>("", "LpPool", 1, kOpen, {{"T", kPoolFloats}}, pool_supported);
  for (const char* op : {"GlobalMaxPool", "GlobalAveragePool", "GlobalLpPool"})
    t.add<GlobalPoolKernel>("", op, 1, kOpen, {{"T", kPoolFloats}});
}

}  // namespace loom::cuda
