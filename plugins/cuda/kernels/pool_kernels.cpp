// Pooling on the CUDA EP with our own kernels (kernels/pool.h): MaxPool
// (float types, int8, uint8; not its Indices output), AveragePool and
// LpPool over 1 to 3 spatial dims with pads, strides, dilations, auto_pad
// and ceil_mode resolved as the reference EP does (loom/sdk/window.h),
// and GlobalMaxPool / GlobalAveragePool / GlobalLpPool; the loom.nhwc
// MaxPool / AveragePool / GlobalAveragePool / GlobalMaxPool (channels-last,
// 2-D) on the same kernels with the channel as the fastest index.
#include <string>
#include <vector>

#include "kernel_table.h"
#include "kernels/conv_node.h"
#include "kernels/families.h"
#include "kernels/kernel_support.h"
#include "kernels/pool.h"

namespace loom::cuda {
namespace {

const std::vector<int32_t> kPoolFloats = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_FLOAT16, LOOM_DTYPE_DOUBLE};
const std::vector<int32_t> kMaxPoolTypes = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_FLOAT16, LOOM_DTYPE_DOUBLE, LOOM_DTYPE_INT8,
                                            LOOM_DTYPE_UINT8};

// The pool an op type names (the bare op type: a loom.nhwc node's is its
// namesake's). Anything else is a registration bug, reported, never run
// as some other pool.
PoolKind kind_of(const std::string& op) {
  if (op == "MaxPool" || op == "GlobalMaxPool") return PoolKind::kMax;
  if (op == "AveragePool" || op == "GlobalAveragePool") return PoolKind::kAverage;
  if (op == "LpPool" || op == "GlobalLpPool") return PoolKind::kLp;
  throw sdk::Error("cuda: '" + op + "' is not a pool", LOOM_STATUS_NOT_IMPLEMENTED);
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
      : nhwc_(n.domain() == kNhwcDomain),
        op_(nhwc_ ? "loom.nhwc " + std::string(n.op_type()) : std::string(n.op_type())),
        attrs_(sdk::window_attrs_of(n, "cuda " + op_)) {
    params_.kind = kind_of(std::string(n.op_type()));  // not op_, which carries "loom.nhwc " for channels-last
    params_.count_include_pad = n.attr_int("count_include_pad", 0) != 0;
    if (params_.kind == PoolKind::kLp) params_.p = lp_exponent(n);
  }

  void compute(sdk::KernelContext& ctx) const {
    const sdk::ConstTensor x = ctx.required_input(0);
    const Dims xs = x.shape();
    if (xs.size() < 3 || (nhwc_ && xs.size() != 4))
      throw sdk::Error("cuda " + op_ + ": input must have rank " + (nhwc_ ? "4" : ">= 3") + ", got " +
                           std::to_string(xs.size()),
                       LOOM_STATUS_INVALID_ARGUMENT);
    const int64_t channels = nhwc_ ? xs.back() : xs[1];
    const Dims spatial = nhwc_ ? Dims(xs.begin() + 1, xs.end() - 1) : Dims(xs.begin() + 2, xs.end());
    const Window g = sdk::resolve_window(attrs_, spatial, {}, "cuda " + op_);
    Dims ys{xs[0]};
    if (!nhwc_) ys.push_back(channels);
    ys.insert(ys.end(), g.out.begin(), g.out.end());
    if (nhwc_) ys.push_back(channels);
    const int64_t planes = sdk::checked_mul(xs[0], channels, "cuda " + op_ + " planes");
    PoolGeometry pg = with_geometry_errors(op_, [&] { return make_pool_geometry(g, planes); });
    if (nhwc_) pg.channels = channels;
    (void)element_count(ys, "cuda " + op_ + " output");
    sdk::Tensor y = ctx.output(0, ys, x.dtype());
    check_launch_result(launch_pool(x.dtype(), pg, params_, x.raw_data(), y.raw_mutable_data(), stream_of(ctx)), op_,
                        x.dtype());
  }

 private:
  bool nhwc_;
  std::string op_;
  WindowAttrs attrs_;
  PoolParams params_;
};

class GlobalPoolKernel {
 public:
  GlobalPoolKernel(const sdk::Node& n, const EpContext&)
      : nhwc_(n.domain() == kNhwcDomain), op_(n.op_type()), kind_(kind_of(op_)) {
    if (kind_ == PoolKind::kLp) p_ = lp_exponent(n);
  }

  void compute(sdk::KernelContext& ctx) const {
    const sdk::ConstTensor x = ctx.required_input(0);
    const Dims xs = x.shape();
    if (xs.size() < 2)
      throw sdk::Error("cuda " + op_ + ": input must have rank >= 2, got " + std::to_string(xs.size()),
                       LOOM_STATUS_INVALID_ARGUMENT);
    if (nhwc_ && xs.size() != 4)
      throw sdk::Error("cuda loom.nhwc " + op_ + ": input must have rank 4, got " + std::to_string(xs.size()),
                       LOOM_STATUS_INVALID_ARGUMENT);
    const size_t c_axis = nhwc_ ? xs.size() - 1 : 1;
    Dims ys(xs.size(), 1);
    ys[0] = xs[0];
    ys[c_axis] = xs[c_axis];
    const int64_t planes = element_count(ys, "cuda " + op_ + " output");
    const Dims spatial_dims = nhwc_ ? Dims(xs.begin() + 1, xs.end() - 1) : Dims(xs.begin() + 2, xs.end());
    const int64_t spatial = element_count(spatial_dims, "cuda " + op_ + " input");
    sdk::Tensor y = ctx.output(0, ys, x.dtype());
    check_launch_result(launch_global_pool(x.dtype(), kind_, p_, planes, spatial, x.raw_data(), y.raw_mutable_data(),
                                           stream_of(ctx), nhwc_ ? xs[c_axis] : 0),
                        op_, x.dtype());
  }

 private:
  bool nhwc_;
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

std::string nhwc_pool_supported(const sdk::Node& node) {
  const std::string why = pool_supported(node);
  if (!why.empty()) return why;
  const auto shape = node.input_shape(0);
  return shape && shape->size() == 4 ? std::string() : "channels-last pools are 2-D";
}

std::string nhwc_global_pool_supported(const sdk::Node& node) {
  const auto shape = node.input_shape(0);
  return shape && shape->size() == 4 ? std::string() : "channels-last pools are 2-D";
}

}  // namespace

void register_nhwc_pool_kernels(KernelTable& t, const std::vector<int32_t>& types) {
  constexpr int kOpen = LOOM_OPSET_OPEN_END;
  t.add<PoolKernel>(kNhwcDomain, "MaxPool", 1, kOpen, {{"T", types}}, nhwc_pool_supported);
  t.add<PoolKernel>(kNhwcDomain, "AveragePool", 1, kOpen, {{"T", types}}, nhwc_pool_supported);
  for (const char* op : {"GlobalMaxPool", "GlobalAveragePool"})
    t.add<GlobalPoolKernel>(kNhwcDomain, op, 1, kOpen, {{"T", types}}, nhwc_global_pool_supported);
}

void register_pool_kernels(KernelTable& t) {
  constexpr int kOpen = LOOM_OPSET_OPEN_END;
  t.add<PoolKernel>("", "MaxPool", 1, kOpen, {{"T", kMaxPoolTypes}}, pool_supported);
  t.add<PoolKernel>("", "AveragePool", 1, kOpen, {{"T", kPoolFloats}}, pool_supported);
  t.add<PoolKernel>("", "LpPool", 1, kOpen, {{"T", kPoolFloats}}, pool_supported);
  for (const char* op : {"GlobalMaxPool", "GlobalAveragePool", "GlobalLpPool"})
    t.add<GlobalPoolKernel>("", op, 1, kOpen, {{"T", kPoolFloats}});
}

}  // namespace loom::cuda
