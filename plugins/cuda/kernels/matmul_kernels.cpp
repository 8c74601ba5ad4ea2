// The matrix products on the CUDA EP: MatMul (numpy batching, 1-D operands)
// and com.microsoft FusedMatMul (alpha and transposes on MatMul), on cuBLAS
// (kernels/gemm_blas.h); Gemm and FusedGemm register from
// kernels/gemm_kernels.cpp, com.microsoft Attention from
// kernels/attention_kernels.cpp. float, float16 (float accumulation) and
// double.
#include <stdexcept>
#include <string>
#include <vector>

#include "kernel_table.h"
#include "kernels/attention.h"
#include "kernels/families.h"
#include "kernels/gemm_blas.h"
#include "kernels/half_operands.h"
#include "kernels/kernel_support.h"
#include "kernels/matmul.h"
#include "kernels/matmul_plan.h"
#include "kernels/product_common.h"

namespace loom::cuda {
namespace {

// Output 0 = alpha * op(A) x op(B) with numpy batching (MatMul,
// FusedMatMul).
void numpy_product(sdk::KernelContext& ctx, const std::string& op, bool trans_a, bool trans_b, double alpha,
                   const EpContext& ep, const HalfOperands& half) {
  const bool tf32 = ep.options.use_tf32;
  sdk::ConstTensor a = ctx.required_input(0), b = ctx.required_input(1);
  if (a.dtype() != b.dtype()) invalid(op, "A and B element types differ");
  MatMulShape s;
  try {
    s = matmul_shape(a.shape(), b.shape(), trans_a, trans_b);
  } catch (const std::invalid_argument& e) {
    invalid(op, std::string(e.what()) + " (A " + dims_string(a.shape()) + ", B " + dims_string(b.shape()) + ")");
  }
  const int64_t count = element_count(s.out, "cuda " + op + " output");
  sdk::Tensor y = ctx.output(0, s.out, a.dtype());
  if (count == 0) return;
  if (s.k == 0) {
    zero_fill(y, count, ctx);
    return;
  }
  StreamResources& res = stream_resources(ctx);
  if (half_mode(ep, a.dtype())) {
    const void* ha = half_operand(res, half.a, half.a_constant, a.raw_data(), a.size(), kHalfInputSlot);
    const void* hb = half_operand(res, half.b, half.b_constant, b.raw_data(), b.size(), kHalfWeightSlot);
    matmul_batches(res.blas(), s, plan_batches(s), GemmTypes{LOOM_DTYPE_FLOAT16, LOOM_DTYPE_FLOAT, false}, alpha, ha,
                   hb, y.raw_mutable_data());
    return;
  }
  matmul_batches(res.blas(), s, plan_batches(s), GemmTypes{a.dtype(), a.dtype(), tf32}, alpha, a.raw_data(),
                 b.raw_data(), y.raw_mutable_data());
}

class MatMulKernel {
 public:
  MatMulKernel(const sdk::Node& node, const EpContext& ep) : ep_(ep), half_(node) {}
  void compute(sdk::KernelContext& ctx) const { numpy_product(ctx, "MatMul", false, false, 1.0, ep_, half_); }

 private:
  const EpContext& ep_;
  HalfOperands half_;
};

// transBatchA / transBatchB are declined at claim time (fused_supported).
class FusedMatMulKernel {
 public:
  FusedMatMulKernel(const sdk::Node& node, const EpContext& ep)
      : alpha_(node.attr_float("alpha", 1.f)), trans_a_(node.attr_int("transA", 0) != 0),
        trans_b_(node.attr_int("transB", 0) != 0), ep_(ep), half_(node) {}
  void compute(sdk::KernelContext& ctx) const {
    numpy_product(ctx, "FusedMatMul", trans_a_, trans_b_, alpha_, ep_, half_);
  }

 private:
  float alpha_;
  bool trans_a_, trans_b_;
  const EpContext& ep_;
  HalfOperands half_;
};

std::string fused_supported(const sdk::Node& node) {
  if (node.attr_int("transBatchA", 0) != 0 || node.attr_int("transBatchB", 0) != 0)
    return "transBatchA / transBatchB are not supported";
  return same_input_types(node);
}

}  // namespace

void register_matmul_kernels(KernelTable& t) {
  constexpr int kOpen = LOOM_OPSET_OPEN_END;
  t.add<MatMulKernel>("", "MatMul", 1, kOpen, {{"T", kBlasTypes}}, same_input_types);
  register_gemm_kernels(t);
  t.add<FusedMatMulKernel>("com.microsoft", "FusedMatMul", 1, kOpen, {{"T", kBlasTypes}}, fused_supported);
  register_attention_kernels(t);
}

}  // namespace loom::cuda
