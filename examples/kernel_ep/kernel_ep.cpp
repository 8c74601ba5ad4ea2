// kernel_ep: a third-party kernel-style execution provider for Loom, built
// against the installed SDK alone. It serves nodes from a static kernel
// table keyed by (domain, op type, opset range, type constraints): the host
// places a matching node on it without asking (no get_capability).
//
// Kernels: Relu (a plain function) and LeakyRelu (a class kernel that reads
// its `alpha` attribute once per node), on float tensors of any shape.
#include <loom/sdk.h>

#include <memory>

namespace {

using namespace loom::sdk;

void relu(KernelContext& ctx) {
  ConstTensor x = ctx.required_input(0);
  Tensor y = ctx.output(0, x.shape(), LOOM_DTYPE_FLOAT);
  const float* px = x.data<float>();
  float* py = y.mutable_data<float>();
  for (int64_t i = 0; i < x.size(); ++i) py[i] = px[i] > 0.0f ? px[i] : 0.0f;
}

// Parsed once per node; compute may run concurrently, so it is const.
class LeakyRelu {
 public:
  explicit LeakyRelu(const Node& node) : alpha_(node.attr_float("alpha", 0.01f)) {}
  void compute(KernelContext& ctx) const {
    ConstTensor x = ctx.required_input(0);
    Tensor y = ctx.output(0, x.shape(), LOOM_DTYPE_FLOAT);
    const float* px = x.data<float>();
    float* py = y.mutable_data<float>();
    for (int64_t i = 0; i < x.size(); ++i) py[i] = px[i] >= 0.0f ? px[i] : alpha_ * px[i];
  }

 private:
  float alpha_;
};

class KernelEp : public Ep {
 public:
  const KernelRegistry* kernels() const override {
    static const KernelRegistry table = [] {
      KernelRegistry r;
      const std::vector<TypeConstraintSpec> float_only = {{"T", {LOOM_DTYPE_FLOAT}}};
      r.add("", "Relu", 6, LOOM_OPSET_OPEN_END, relu, float_only).output_may_reuse_input(0, 0);
      r.add_class<LeakyRelu>("", "LeakyRelu", 6, LOOM_OPSET_OPEN_END, float_only).output_may_reuse_input(0, 0);
      return r;
    }();
    return &table;
  }
};

class KernelFactory : public EpFactory {
 public:
  KernelFactory() : EpFactory("kernel_ep") {}
  std::unique_ptr<Ep> create_ep(size_t, const Options&) override { return std::make_unique<KernelEp>(); }
};

std::unique_ptr<Plugin> create_plugin() {
  auto p = std::make_unique<Plugin>();
  p->add_factory(std::make_unique<KernelFactory>());
  return p;
}

}  // namespace

LOOM_SDK_DEFINE_PLUGIN("kernel_ep", "1.0.0", create_plugin)
