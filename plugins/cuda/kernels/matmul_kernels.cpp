// The matrix products on the CUDA EP: MatMul (numpy batching, 1-D operands),
// Gemm (transposes, alpha, beta, C broadcast to [M, N]) and com.microsoft
// FusedMatMul (alpha and transposes on MatMul), all on cuBLAS
// (kernels/gemm_blas.h); com.microsoft Attention registers from
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

namespace loom::cuda {
namespace {

const std::vector<int32_t> kBlasTypes = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_FLOAT16, LOOM_DTYPE_DOUBLE};

std::string dims_string(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

[[noreturn]] void invalid(const std::string& op, const std::string& what) {
  throw sdk::Error("cuda " + op + ": " + what, LOOM_STATUS_INVALID_ARGUMENT);
}

void zero_fill(const sdk::Tensor& y, int64_t count, const sdk::KernelContext& ctx) {
  check(cudaMemsetAsync(y.raw_mutable_data(), 0, static_cast<size_t>(count) * element_bytes(y.dtype()),
                        stream_of(ctx)),
        "cudaMemsetAsync");
}

// fp16 mode (kernels/half_operands.h): A and B as float16, each kept with
// the kernel when it is a constant.
struct HalfOperands {
  explicit HalfOperands(const sdk::Node& node)
      : a_constant(node.input_constant(0).exists()), b_constant(node.input_constant(1).exists()) {}
  bool a_constant, b_constant;
  HalfConstant a, b;
};

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

// Y = alpha * op(A) op(B) + beta * C: C (when given and beta != 0) is first
// broadcast into Y, then one GEMM accumulates into it with beta.
class GemmKernel {
 public:
  GemmKernel(const sdk::Node& node, const EpContext& ep)
      : alpha_(node.attr_float("alpha", 1.f)), beta_(node.attr_float("beta", 1.f)),
        trans_a_(node.attr_int("transA", 0) != 0), trans_b_(node.attr_int("transB", 0) != 0), ep_(ep), half_(node) {}

  void compute(sdk::KernelContext& ctx) const {
    const std::string op = "Gemm";
    sdk::ConstTensor a = ctx.required_input(0), b = ctx.required_input(1), c = ctx.input(2);
    if (a.rank() != 2 || b.rank() != 2)
      invalid(op, "A " + dims_string(a.shape()) + " and B " + dims_string(b.shape()) + " must be 2-D");
    const int32_t dtype = a.dtype();
    if (b.dtype() != dtype || (c.exists() && c.dtype() != dtype)) invalid(op, "A, B and C element types differ");
    const int64_t m = trans_a_ ? a.dim(1) : a.dim(0), k = trans_a_ ? a.dim(0) : a.dim(1);
    const int64_t kb = trans_b_ ? b.dim(1) : b.dim(0), n = trans_b_ ? b.dim(0) : b.dim(1);
    if (k != kb)
      invalid(op, "inner dimensions differ: op(A) is [" + std::to_string(m) + "," + std::to_string(k) +
                      "], op(B) is [" + std::to_string(kb) + "," + std::to_string(n) + "]");
    if (c.exists() && !gemm_c_broadcasts(c.shape(), m, n))
      invalid(op, "C " + dims_string(c.shape()) + " does not broadcast to [" + std::to_string(m) + "," +
                      std::to_string(n) + "]");
    const int64_t count = element_count({m, n}, "cuda Gemm output");
    sdk::Tensor y = ctx.output(0, {m, n}, dtype);
    if (count == 0) return;
    const bool use_c = c.exists() && beta_ != 0.f;
    if (use_c) {
      // With K = 0 the product is empty: Y = beta * C.
      StridedMap map;
      try {
        map = broadcast_map({m, n}, c.shape());
      } catch (const std::invalid_argument& e) {
        invalid(op, e.what());
      }
      check(launch_broadcast_scale(dtype, c.raw_data(), map, k == 0 ? beta_ : 1.0, y.raw_mutable_data(), count,
                                   stream_of(ctx)),
            "Gemm C broadcast launch");
    }
    if (k == 0) {
      if (!use_c) zero_fill(y, count, ctx);
      return;
    }
    StreamResources& res = stream_resources(ctx);
    const bool half = half_mode(ep_, dtype);  // fp16 mode: float16 A and B, float32 Y
    const void* pa = half ? half_operand(res, half_.a, half_.a_constant, a.raw_data(), a.size(), kHalfInputSlot)
                          : a.raw_data();
    const void* pb = half ? half_operand(res, half_.b, half_.b_constant, b.raw_data(), b.size(), kHalfWeightSlot)
                          : b.raw_data();
    const GemmTypes types = half ? GemmTypes{LOOM_DTYPE_FLOAT16, LOOM_DTYPE_FLOAT, false}
                                 : GemmTypes{dtype, dtype, ep_.options.use_tf32};
    gemm_strided(res.blas(), RowMajorGemm{trans_a_, trans_b_, m, n, k}, types, alpha_, use_c ? beta_ : 0.0, pa, 0,
                 pb, 0, y.raw_mutable_data(), 0, 1);
  }

 private:
  float alpha_, beta_;
  bool trans_a_, trans_b_;
  const EpContext& ep_;
  HalfOperands half_;
};

std::string same_input_types(const sdk::Node& node) {
  const size_t inputs = node.input_count() < 3 ? node.input_count() : 3;
  for (size_t i = 1; i < inputs; ++i) {
    if (node.input_name(i).empty()) continue;
    const int32_t d = node.input_dtype(i), d0 = node.input_dtype(0);
    if (d != LOOM_DTYPE_UNDEFINED && d0 != LOOM_DTYPE_UNDEFINED && d != d0) return "inputs of different element types";
  }
  return {};
}

std::string gemm_supported(const sdk::Node& node) {
  for (size_t i = 0; i < 2; ++i) {
    auto shape = node.input_shape(i);
    if (shape && shape->size() != 2) return "input " + std::to_string(i) + " is not 2-D";
  }
  if (node.input_count() > 2 && !node.input_name(2).empty()) {
    auto c = node.input_shape(2);
    if (c && c->size() > 2) return "C has rank " + std::to_string(c->size()) + " (at most 2)";
  }
  return same_input_types(node);
}

std::string fused_supported(const sdk::Node& node) {
  if (node.attr_int("transBatchA", 0) != 0 || node.attr_int("transBatchB", 0) != 0)
    return "transBatchA / transBatchB are not supported";
  return same_input_types(node);
}

}  // namespace

void register_matmul_kernels(KernelTable& t) {
  constexpr int kOpen = LOOM_OPSET_OPEN_END;
  t.add<MatMulKernel>("", "MatMul", 1, kOpen, {{"T", kBlasTypes}}, same_input_types);
  t.add<GemmKernel>("", "Gemm", 7, kOpen, {{"T", kBlasTypes}}, gemm_supported);
  t.add<FusedMatMulKernel>("com.microsoft", "FusedMatMul", 1, kOpen, {{"T", kBlasTypes}}, fused_supported);
  register_attention_kernels(t);
}

}  // namespace loom::cuda
