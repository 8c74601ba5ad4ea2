// The reference EP: plain, obviously-correct kernels for the ONNX opset. It is
// the fallback for nodes no faster EP claims and the oracle every other EP is
// tested against, so clarity beats speed here.
#include <memory>

#include "kernel_families.h"
#include "loom/sdk.h"

namespace loom::reference {
namespace {

sdk::KernelRegistry build_registry() {
  sdk::KernelRegistry r;
  register_elementwise_kernels(r);
  register_tensor_kernels(r);
  register_reduction_kernels(r);
  register_nn_kernels(r);
  register_sequence_kernels(r);
  register_optional_kernels(r);
  register_control_flow_kernels(r);
  register_text_kernels(r);
  register_training_kernels(r);
  register_random_kernels(r);
  register_signal_kernels(r);
  register_contrib_kernels(r);
  register_ml_kernels(r);
  return r;
}

class ReferenceEp : public sdk::Ep {
 public:
  const sdk::KernelRegistry* kernels() const override {
    static const sdk::KernelRegistry registry = build_registry();
    return &registry;
  }
};

class ReferenceFactory : public sdk::EpFactory {
 public:
  ReferenceFactory() : EpFactory("reference") {}
  std::unique_ptr<sdk::Ep> create_ep(size_t, const sdk::Options&) override {
    return std::make_unique<ReferenceEp>();
  }
};

std::unique_ptr<sdk::Plugin> create_plugin() {
  auto p = std::make_unique<sdk::Plugin>();
  p->add_factory(std::make_unique<ReferenceFactory>());
  return p;
}

}  // namespace
}  // namespace loom::reference

LOOM_SDK_DEFINE_PLUGIN("reference", "0.1.0", loom::reference::create_plugin)
