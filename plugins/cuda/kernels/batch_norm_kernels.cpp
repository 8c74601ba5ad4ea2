// BatchNormalization on the CUDA EP (kernels/batch_norm.h), inference
// only, float, float16 and double. From opset 15
// BatchNormalization's scale / B and mean / var may each have their own
// float type; they are read as such.
#include <string>
#include <vector>

#include "kernel_table.h"
#include "kernels/batch_norm.h"
#include "kernels/kernel_support.h"

namespace loom::cuda {
namespace {

const std::vector<int32_t> kNormTypes = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_FLOAT16, LOOM_DTYPE_DOUBLE};

[[noreturn]] void fail(const std::string& op, const std::string& why) {
  throw sdk::Error("cuda " + op + ": " + why, LOOM_STATUS_INVALID_ARGUMENT);
}

void check_launch_result(cudaError_t e, const std::string& op, int32_t dtype) {
  if (e == cudaErrorInvalidValue)
    throw sdk::Error("cuda " + op + ": no kernel for " + sdk::dtype_name(dtype), LOOM_STATUS_NOT_IMPLEMENTED);
  check(e, (op + " launch").c_str());
}

bool is_norm_type(int32_t dtype) {
  return dtype == LOOM_DTYPE_FLOAT || dtype == LOOM_DTYPE_FLOAT16 || dtype == LOOM_DTYPE_DOUBLE;
}

// X is viewed as [N, P, S]: P = C and S = the spatial size, or, for the
// legacy spatial=0 (before opset 9) with per-activation parameters,
// P = C * S and S = 1 (spatial=0 with per-channel parameters is the same
// as spatial=1), as the reference EP reads it.
class BatchNormKernel {
 public:
  BatchNormKernel(const sdk::Node& n, const EpContext&)
      : epsilon_(n.attr_float("epsilon", 1e-5f)), spatial_(n.opset() >= 9 || n.attr_int("spatial", 1) != 0) {}

  void compute(sdk::KernelContext& ctx) const {
    const sdk::ConstTensor x = ctx.required_input(0);
    const std::vector<int64_t> xs = x.shape();
    if (xs.size() < 2) fail(kOp, "X must have rank >= 2, got " + std::to_string(xs.size()));
    const sdk::ConstTensor scale = ctx.required_input(1), bias = ctx.required_input(2);
    const sdk::ConstTensor mean = ctx.required_input(3), var = ctx.required_input(4);
    const int64_t inner = element_count(std::vector<int64_t>(xs.begin() + 2, xs.end()), "cuda BatchNormalization");
    const bool spatial = spatial_ || scale.size() == xs[1];
    const int64_t channels = spatial ? xs[1] : sdk::checked_mul(xs[1], inner, "cuda BatchNormalization");
    for (const auto& [t, what] : {std::pair{scale, "scale"}, {bias, "B"}, {mean, "input_mean"}, {var, "input_var"}}) {
      if (t.size() != channels)
        fail(kOp, std::string(what) + " has " + std::to_string(t.size()) + " elements, expected " +
                      std::to_string(channels));
      if (!is_norm_type(t.dtype())) fail(kOp, std::string(what) + " has element type " + sdk::dtype_name(t.dtype()));
    }
    sdk::Tensor y = ctx.output(0, xs, x.dtype());
    if (x.size() == 0) return;
    StreamResources& res = stream_resources(ctx);
    void* scratch = res.scratch(batch_norm_scratch_bytes(channels), 0);
    auto param = [](const sdk::ConstTensor& t) { return NormParam{t.raw_data(), t.dtype()}; };
    check_launch_result(
        launch_batch_norm(x.dtype(), x.raw_data(), y.raw_mutable_data(), x.size(), channels, spatial ? inner : 1,
                          param(scale), param(bias), param(mean), param(var), epsilon_, scratch, res.stream()),
        kOp, x.dtype());
  }

 private:
  static constexpr const char* kOp = "BatchNormalization";
  float epsilon_;
  bool spatial_;
};

// Inference only: training_mode (14+) or the training statistics outputs
// (before 14) are declined.
std::string batch_norm_supported(const sdk::Node& node) {
  if (node.opset() >= 14 && node.attr_int("training_mode", 0) != 0)
    return "training_mode=1 is not supported (inference only)";
  for (size_t i = 1; i < node.output_count(); ++i)
    if (!node.output_name(i).empty())
      return "output " + std::to_string(i) + " (training statistics) is not supported (inference only)";
  return {};
}

}  // namespace

void register_batch_norm_kernels(KernelTable& t) {
  constexpr int kOpen = LOOM_OPSET_OPEN_END;
  t.add<BatchNormKernel>("", "BatchNormalization", 1, 13, {{"T", kNormTypes}}, batch_norm_supported)
      .output_may_reuse_input(0, 0);
  t.add<BatchNormKernel>("", "BatchNormalization", 14, 14, {{"T", kNormTypes}, {"U", kNormTypes}}, batch_norm_supported)
      .output_may_reuse_input(0, 0);
  t.add<BatchNormKernel>("", "BatchNormalization", 15, kOpen,
                         {{"T", kNormTypes}, {"T1", kNormTypes}, {"T2", kNormTypes}}, batch_norm_supported)
      .output_may_reuse_input(0, 0);
}

}  // namespace loom::cuda
