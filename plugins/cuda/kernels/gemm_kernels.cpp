// Gemm and com.microsoft FusedGemm (Gemm followed by an activation, as
// ONNX Runtime's GemmActivationFusion makes it) on the CUDA EP. A row bias C
// (shape [N] or [1, N], beta 1) and a ReLU run as cuBLASLt epilogues inside
// the product (kernels/gemm_lt.h); any other C is broadcast into Y first and
// accumulated with beta by cuBLAS (kernels/gemm_blas.h), and other
// activations run in place afterwards. float, float16 and double.
#include <optional>
#include <string>
#include <vector>

#include "kernel_table.h"
#include "kernels/elementwise.h"
#include "kernels/families.h"
#include "kernels/gemm_blas.h"
#include "kernels/gemm_lt.h"
#include "kernels/matmul.h"
#include "kernels/product_common.h"

namespace loom::cuda {
namespace {

// Y = alpha * op(A) op(B) + beta * C, then `relu` when asked. Returns
// whether the ReLU was applied (by the epilogue), and Y.
class GemmCore {
 public:
  GemmCore(const sdk::Node& node, const EpContext& ep)
      : alpha_(node.attr_float("alpha", 1.f)), beta_(node.attr_float("beta", 1.f)),
        trans_a_(node.attr_int("transA", 0) != 0), trans_b_(node.attr_int("transB", 0) != 0), ep_(ep), half_(node) {}

  struct Result {
    sdk::Tensor y;
    int64_t count = 0;
    bool relu_applied = false;
  };

  Result run(sdk::KernelContext& ctx, const std::string& op, bool relu) const {
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
    Result r;
    r.count = element_count({m, n}, "cuda " + op + " output");
    r.y = ctx.output(0, {m, n}, dtype);
    if (r.count == 0) return r;
    const bool use_c = c.exists() && beta_ != 0.f;
    const bool half = half_mode(ep_, dtype);  // fp16 mode: float16 A and B, float32 Y
    if (k > 0 && !half) {
      const std::optional<LtEpilogue> e =
          lt_epilogue(c.exists(), c.exists() ? c.shape() : std::vector<int64_t>{}, n, beta_, relu);
      // A plain product stays on cuBLAS's GEMM; Lt is for what it fuses.
      if (e && *e != LtEpilogue::kDefault && dtype != LOOM_DTYPE_DOUBLE &&
          gemm_lt(stream_resources(ctx), ep_, RowMajorGemm{trans_a_, trans_b_, m, n, k},
                  GemmTypes{dtype, dtype, ep_.options.use_tf32}, alpha_, a.raw_data(), b.raw_data(),
                  use_c ? c.raw_data() : nullptr, *e, r.y.raw_mutable_data())) {
        r.relu_applied = relu;
        return r;
      }
    }
    if (use_c) {
      // With K = 0 the product is empty: Y = beta * C.
      StridedMap map;
      try {
        map = broadcast_map({m, n}, c.shape());
      } catch (const std::invalid_argument& e) {
        invalid(op, e.what());
      }
      check(launch_broadcast_scale(dtype, c.raw_data(), map, k == 0 ? beta_ : 1.0, r.y.raw_mutable_data(), r.count,
                                   stream_of(ctx)),
            "Gemm C broadcast launch");
    }
    if (k == 0) {
      if (!use_c) zero_fill(r.y, r.count, ctx);
      return r;
    }
    StreamResources& res = stream_resources(ctx);
    const void* pa = half ? half_operand(res, half_.a, half_.a_constant, a.raw_data(), a.size(), kHalfInputSlot)
                          : a.raw_data();
    const void* pb = half ? half_operand(res, half_.b, half_.b_constant, b.raw_data(), b.size(), kHalfWeightSlot)
                          : b.raw_data();
    const GemmTypes types = half ? GemmTypes{LOOM_DTYPE_FLOAT16, LOOM_DTYPE_FLOAT, false}
                                 : GemmTypes{dtype, dtype, ep_.options.use_tf32};
    gemm_strided(res.blas(), RowMajorGemm{trans_a_, trans_b_, m, n, k}, types, alpha_, use_c ? beta_ : 0.0, pa, 0,
                 pb, 0, r.y.raw_mutable_data(), 0, 1);
    return r;
  }

 private:
  float alpha_, beta_;
  bool trans_a_, trans_b_;
  const EpContext& ep_;
  HalfOperands half_;
};

class GemmKernel {
 public:
  GemmKernel(const sdk::Node& node, const EpContext& ep) : core_(node, ep) {}
  void compute(sdk::KernelContext& ctx) const { core_.run(ctx, "Gemm", false); }

 private:
  GemmCore core_;
};

// FusedGemm's activation (`activation`, its attributes as activation_<name>,
// ONNX Runtime's defaults) as the element-wise family's op; nullopt for an
// activation this EP does not run.
std::optional<UnaryParams> fused_gemm_activation(const sdk::Node& node) {
  const std::string name = node.attr_string("activation", "");
  auto attr = [&](const char* key, float fallback) { return node.attr_float(std::string("activation_") + key, fallback); };
  UnaryParams p;
  if (name.empty()) p.op = UnaryOp::kIdentity;
  else if (name == "Relu") p.op = UnaryOp::kRelu;
  else if (name == "Tanh") p.op = UnaryOp::kTanh;
  else if (name == "Sigmoid") p.op = UnaryOp::kSigmoid;
  else if (name == "Softsign") p.op = UnaryOp::kSoftsign;
  else if (name == "Softplus") p.op = UnaryOp::kSoftplus;
  else if (name == "LeakyRelu") p = {UnaryOp::kLeakyRelu, attr("alpha", 0.01f), 0.f};
  else if (name == "Elu") p = {UnaryOp::kElu, attr("alpha", 1.f), 0.f};
  else if (name == "ThresholdedRelu") p = {UnaryOp::kThresholdedRelu, attr("alpha", 1.f), 0.f};
  else if (name == "HardSigmoid") p = {UnaryOp::kHardSigmoid, attr("alpha", 0.2f), attr("beta", 0.5f)};
  else if (name == "Selu")  // the family's Selu takes gamma as beta
    p = {UnaryOp::kSelu, attr("alpha", 1.67326319217681884765625f), attr("gamma", 1.05070102214813232421875f)};
  else return std::nullopt;
  return p;
}

class FusedGemmKernel {
 public:
  FusedGemmKernel(const sdk::Node& node, const EpContext& ep)
      : core_(node, ep), act_(fused_gemm_activation(node).value_or(UnaryParams{})) {}

  void compute(sdk::KernelContext& ctx) const {
    GemmCore::Result r = core_.run(ctx, "FusedGemm", act_.op == UnaryOp::kRelu);
    if (r.count == 0 || act_.op == UnaryOp::kIdentity || r.relu_applied) return;
    void* y = r.y.raw_mutable_data();
    check(launch_unary(act_, r.y.dtype(), y, nullptr, StridedMap{}, y, r.count, stream_of(ctx)),
          "FusedGemm activation launch");
  }

 private:
  GemmCore core_;
  UnaryParams act_;
};

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

std::string fused_gemm_supported(const sdk::Node& node) {
  if (!fused_gemm_activation(node))
    return "activation '" + node.attr_string("activation", "") + "' is not one this EP runs after a Gemm";
  return gemm_supported(node);
}

}  // namespace

void register_gemm_kernels(KernelTable& t) {
  constexpr int kOpen = LOOM_OPSET_OPEN_END;
  t.add<GemmKernel>("", "Gemm", 7, kOpen, {{"T", kBlasTypes}}, gemm_supported);
  t.add<FusedGemmKernel>("com.microsoft", "FusedGemm", 1, kOpen, {{"T", kBlasTypes}}, fused_gemm_supported);
}

}  // namespace loom::cuda
