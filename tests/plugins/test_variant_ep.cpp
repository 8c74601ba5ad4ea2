// Variant builds of one plugin ("test_variant"), compiled several times
// with a different LOOM_TEST_VARIANT_SCORE (tests/plugins/CMakeLists.txt):
// the host must initialise only the highest-scoring build of a directory,
// and refuse a build that scores 0. Its provider serves float Relu.
#include "loom/sdk.h"

namespace {

using namespace loom::sdk;

void relu(KernelContext& ctx) {
  ConstTensor x = ctx.required_input(0);
  Tensor y = ctx.output(0, x.shape(), LOOM_DTYPE_FLOAT);
  for (int64_t i = 0; i < x.size(); ++i) y.mutable_data<float>()[i] = x.data<float>()[i] > 0 ? x.data<float>()[i] : 0;
}

class VariantEp : public Ep {
 public:
  const KernelRegistry* kernels() const override {
    static const KernelRegistry r = [] {
      KernelRegistry k;
      k.add("", "Relu", 6, LOOM_OPSET_OPEN_END, relu, {{"T", {LOOM_DTYPE_FLOAT}}});
      return k;
    }();
    return &r;
  }
};

class VariantFactory : public EpFactory {
 public:
  VariantFactory() : EpFactory("test_variant") {}
  std::unique_ptr<Ep> create_ep(size_t, const Options&) override { return std::make_unique<VariantEp>(); }
};

std::unique_ptr<Plugin> create_plugin() {
  auto p = std::make_unique<Plugin>();
  p->add_factory(std::make_unique<VariantFactory>());
  return p;
}

int32_t score() { return LOOM_TEST_VARIANT_SCORE; }

}  // namespace

LOOM_SDK_DEFINE_PLUGIN_VARIANT("test_variant", "0.1.0", create_plugin, score)
