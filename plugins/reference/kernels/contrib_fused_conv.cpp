// com.microsoft FusedConv and FusedGemm (ONNX Runtime semantics): the ONNX
// Conv / Gemm (reused from nn_conv.cpp / nn_matmul.cpp) followed by an
// activation applied in place.
//  - FusedConv: Y = act(Conv(X, W, B) + Z), Z an optional 4th input of Y's
//    shape; `activation` in {Relu, Tanh, Sigmoid, Silu, LeakyRelu, Clip,
//    HardSigmoid}, the last three with `activation_params` (alpha; min, max;
//    alpha, beta) as ORT's GetFusedActivationAttr requires.
//  - FusedGemm: Y = act(Gemm(A, B, C)); the activation's attributes travel as
//    `activation_<name>` (ORT's GemmActivationFusion copies them so):
//    activation_alpha / activation_beta / activation_gamma.
#include <cmath>
#include <string>
#include <vector>

#include "common/dispatch.h"
#include "common/shape.h"
#include "kernels/contrib_internal.h"
#include "kernels/nn_internal.h"

namespace loom::reference {
namespace {

using sdk::ConstTensor;
using sdk::KernelContext;

struct Activation {
  enum Kind { kIdentity, kRelu, kTanh, kSigmoid, kSilu, kLeakyRelu, kClip, kHardSigmoid, kElu, kSelu, kSoftplus,
              kSoftsign, kThresholdedRelu } kind = kIdentity;
  double alpha = 0, beta = 0, gamma = 0;

  template <class T>
  T apply(T x) const {
    switch (kind) {
      case kIdentity: return x;
      case kRelu: return x > T(0) ? x : T(0);
      case kTanh: return std::tanh(x);
      case kSigmoid: return T(1) / (T(1) + std::exp(-x));
      case kSilu: return x / (T(1) + std::exp(-x));
      case kLeakyRelu: return x >= T(0) ? x : static_cast<T>(alpha) * x;
      case kClip: return std::min(std::max(x, static_cast<T>(alpha)), static_cast<T>(beta));
      case kHardSigmoid:
        return std::max(T(0), std::min(T(1), static_cast<T>(alpha) * x + static_cast<T>(beta)));
      case kElu: return x >= T(0) ? x : static_cast<T>(alpha) * (std::exp(x) - T(1));
      case kSelu:
        return static_cast<T>(gamma) * (x > T(0) ? x : static_cast<T>(alpha) * (std::exp(x) - T(1)));
      case kSoftplus: return x > T(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
      case kSoftsign: return x / (T(1) + std::abs(x));
      case kThresholdedRelu: return x > static_cast<T>(alpha) ? x : T(0);
    }
    return x;
  }
};

Activation conv_activation(const sdk::Node& node) {
  Activation a;
  const auto name = node.find_string("activation");
  if (!name) return a;
  const std::vector<float> params = node.find_floats("activation_params").value_or(std::vector<float>{});
  auto take = [&](size_t count) {
    if (params.size() != count)
      sdk::fail_invalid("FusedConv: activation " + *name + " needs " + std::to_string(count) +
                        " activation_params, got " + std::to_string(params.size()));
    if (count > 0) a.alpha = params[0];
    if (count > 1) a.beta = params[1];
  };
  if (*name == "Relu") a.kind = Activation::kRelu;
  else if (*name == "Tanh") a.kind = Activation::kTanh;
  else if (*name == "Sigmoid") a.kind = Activation::kSigmoid;
  else if (*name == "Silu") a.kind = Activation::kSilu;
  else if (*name == "LeakyRelu") a.kind = Activation::kLeakyRelu, take(1);
  else if (*name == "Clip") a.kind = Activation::kClip, take(2);
  else if (*name == "HardSigmoid") a.kind = Activation::kHardSigmoid, take(2);
  else sdk::fail_invalid("FusedConv: unimplemented activation '" + *name + "'");
  return a;
}

Activation gemm_activation(const sdk::Node& node) {
  Activation a;
  const auto name = node.find_string("activation");
  if (!name || name->empty()) return a;
  auto attr = [&](const char* key, float fallback) {
    return static_cast<double>(node.find_float(std::string("activation_") + key).value_or(fallback));
  };
  if (*name == "Relu") a.kind = Activation::kRelu;
  else if (*name == "Tanh") a.kind = Activation::kTanh;
  else if (*name == "Sigmoid") a.kind = Activation::kSigmoid;
  else if (*name == "Softsign") a.kind = Activation::kSoftsign;
  else if (*name == "Softplus") a.kind = Activation::kSoftplus;
  else if (*name == "LeakyRelu") a.kind = Activation::kLeakyRelu, a.alpha = attr("alpha", 0.01f);
  else if (*name == "Elu") a.kind = Activation::kElu, a.alpha = attr("alpha", 1.0f);
  else if (*name == "ThresholdedRelu") a.kind = Activation::kThresholdedRelu, a.alpha = attr("alpha", 1.0f);
  else if (*name == "HardSigmoid")
    a.kind = Activation::kHardSigmoid, a.alpha = attr("alpha", 0.2f), a.beta = attr("beta", 0.5f);
  else if (*name == "Selu")
    a.kind = Activation::kSelu, a.alpha = attr("alpha", 1.67326319217681884765625f),
    a.gamma = attr("gamma", 1.05070102214813232421875f);
  else sdk::fail_invalid("FusedGemm: unimplemented activation '" + *name + "'");
  return a;
}

// y = act(y + z) in place (z may be absent).
void epilogue(const sdk::Tensor& y, const ConstTensor& z, const Activation& act, const std::string& op) {
  if (z.exists() && z.shape() != y.shape())
    sdk::fail_invalid(op + ": Z " + shape_string(z.shape()) + " must have Y's shape " + shape_string(y.shape()));
  if (z.exists() && z.dtype() != y.dtype()) sdk::fail_invalid(op + ": Z and Y element types differ");
  if (act.kind == Activation::kIdentity && !z.exists()) return;
  if (y.dtype() == LOOM_DTYPE_FLOAT16) {  // computed in float, rounded once
    auto* py = y.template mutable_data<sdk::Float16>();
    const sdk::Float16* pz = z.exists() ? z.template data<sdk::Float16>() : nullptr;
    for (int64_t i = 0; i < y.size(); ++i)
      py[i] = sdk::Float16(act.apply<float>(pz ? float(py[i]) + float(pz[i]) : float(py[i])));
    return;
  }
  dispatch<TypeList<float, double>>(y.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    T* py = y.template mutable_data<T>();
    const T* pz = z.exists() ? z.template data<T>() : nullptr;
    const int64_t n = y.size();
    for (int64_t i = 0; i < n; ++i) py[i] = act.apply<T>(pz ? py[i] + pz[i] : py[i]);
  });
}

bool fused_type(int32_t dtype) {
  return dtype == LOOM_DTYPE_FLOAT || dtype == LOOM_DTYPE_DOUBLE || dtype == LOOM_DTYPE_FLOAT16;
}

class FusedConvKernel {
 public:
  explicit FusedConvKernel(const sdk::Node& node) : act_(conv_activation(node)) {}

  void compute(KernelContext& ctx) const {
    const ConstTensor x = ctx.required_input(0);
    if (!fused_type(x.dtype()))
      sdk::fail_invalid("FusedConv: only float16, float and double are implemented, got " + sdk::dtype_name(x.dtype()));
    const sdk::Tensor y = conv_into_output(ctx, ctx.node());
    epilogue(y, ctx.input(3), act_, "FusedConv");
  }

 private:
  Activation act_;
};

class FusedGemmKernel {
 public:
  explicit FusedGemmKernel(const sdk::Node& node) : act_(gemm_activation(node)) {}

  void compute(KernelContext& ctx) const {
    const ConstTensor a = ctx.required_input(0);
    if (!fused_type(a.dtype()))
      sdk::fail_invalid("FusedGemm: only float16, float and double are implemented, got " + sdk::dtype_name(a.dtype()));
    const sdk::Tensor y = gemm_into_output(ctx, ctx.node());
    epilogue(y, ConstTensor(), act_, "FusedGemm");
  }

 private:
  Activation act_;
};

}  // namespace

void fused_conv_epilogue(const sdk::Node& node, const sdk::Tensor& y, const sdk::ConstTensor& z) {
  epilogue(y, z, conv_activation(node), "FusedConv");
}

void register_contrib_fused_kernels(sdk::KernelRegistry& r) {
  const std::vector<sdk::TypeConstraintSpec> types = {{"T", {LOOM_DTYPE_FLOAT16, LOOM_DTYPE_FLOAT, LOOM_DTYPE_DOUBLE}}};
  r.add_class<FusedConvKernel>(kMsDomain, "FusedConv", 1, LOOM_OPSET_OPEN_END, types);
  r.add_class<FusedGemmKernel>(kMsDomain, "FusedGemm", 1, LOOM_OPSET_OPEN_END, types);
}

}  // namespace loom::reference
