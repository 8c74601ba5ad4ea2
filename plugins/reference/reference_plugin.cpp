// The reference EP: plain, obviously-correct kernels for the ONNX opset. It is
// the fallback for nodes no faster EP claims and the oracle every other EP is
// tested against, so clarity beats speed here.
#include <memory>

#include "common/option_values.h"
#include "kernel_families.h"
#include "loom/sdk.h"

namespace loom::reference {
namespace {

sdk::KernelRegistry build_registry(bool nhwc) {
  sdk::KernelRegistry r;
  if (nhwc) register_nhwc_kernels(r);
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
  register_image_kernels(r);
  return r;
}

// Option `prefer_nhwc` (default false): also claim the channels-last
// loom.nhwc ops, so the session's layout phase rewrites 2-D convolutions
// and pools this EP runs (to test that phase on the CPU). Other options
// (intra_op_threads, which every provider gets) are ignored.
class ReferenceEp : public sdk::Ep {
 public:
  explicit ReferenceEp(bool prefer_nhwc) : prefer_nhwc_(prefer_nhwc) {}

  const sdk::KernelRegistry* kernels() const override {
    static const sdk::KernelRegistry registry = build_registry(false);
    static const sdk::KernelRegistry with_nhwc = build_registry(true);
    return prefer_nhwc_ ? &with_nhwc : &registry;
  }

 private:
  bool prefer_nhwc_;
};

class ReferenceFactory : public sdk::EpFactory {
 public:
  ReferenceFactory() : EpFactory("reference") {}
  std::unique_ptr<sdk::Ep> create_ep(size_t, const sdk::Options& options) override {
    bool prefer_nhwc = false;
    for (const auto& [key, value] : options)
      if (key == "prefer_nhwc") prefer_nhwc = plugin_options::parse_bool("reference", key, value);
    return std::make_unique<ReferenceEp>(prefer_nhwc);
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
