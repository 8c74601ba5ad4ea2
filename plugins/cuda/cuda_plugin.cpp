// The CUDA EP (plugins/cuda): a kernel EP on the device's own memory, with
// asynchronous streams and timed events. Devices come from the CUDA
// runtime; with no driver or no GPU the provider lists none and says why
// (the normal answer on a machine without a GPU, not an error).
#include <cuda_runtime.h>

#include <memory>
#include <string>

#include "cuda_device.h"
#include "kernels/elementwise.h"
#include "loom/sdk.h"

namespace loom::cuda {
namespace {

class CudaEp : public sdk::Ep {
 public:
  explicit CudaEp(int device) : device_(device) { register_elementwise_kernels(kernels_); }
  const sdk::KernelRegistry* kernels() const override { return &kernels_; }
  bool has_capability() const override { return true; }
  void claim(const sdk::Graph& g, sdk::ClaimSink& sink) override {
    for (size_t i = 0; i < g.node_count(); ++i) {
      sdk::Node n = g.node(i);
      if (elementwise_supports(n)) sink.claim_node(n.id(), "cuda kernel");
      else sink.decline(n.id(), "no cuda kernel for this op, type or shape yet");
    }
  }
  const LOOM_Allocator* allocator() const override { return device_.allocator(); }
  const LOOM_DataTransfer* data_transfer() const override { return device_.data_transfer(); }
  LOOM_Stream* create_stream() override { return device_.create_stream(); }
  LOOM_Event* create_event() override { return device_.create_event(); }

 private:
  DeviceObjects device_;
  sdk::KernelRegistry kernels_;
};

class CudaFactory : public sdk::EpFactory {
 public:
  CudaFactory() : EpFactory("cuda") {}
  std::vector<sdk::DeviceSpec> devices() override {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
      reason_ = std::string("no usable CUDA device: ") + cudaGetErrorString(e);
      return {};
    }
    if (count == 0) {
      reason_ = "no CUDA device found";
      return {};
    }
    std::vector<sdk::DeviceSpec> out;
    for (int i = 0; i < count; ++i) {
      cudaDeviceProp p{};
      const std::string name = cudaGetDeviceProperties(&p, i) == cudaSuccess ? p.name : "CUDA device";
      out.push_back(sdk::DeviceSpec{name + " (" + std::to_string(i) + ")", kMemoryName, i, false});
    }
    return out;
  }
  std::string unavailable_reason() override { return reason_; }
  std::unique_ptr<sdk::Ep> create_ep(size_t device_index, const sdk::Options&) override {
    return std::make_unique<CudaEp>(static_cast<int>(device_index));
  }

 private:
  std::string reason_;
};

std::unique_ptr<sdk::Plugin> create_plugin() {
  auto p = std::make_unique<sdk::Plugin>();
  p->add_factory(std::make_unique<CudaFactory>());
  return p;
}

}  // namespace
}  // namespace loom::cuda

LOOM_SDK_DEFINE_PLUGIN("cuda", "0.1.0", loom::cuda::create_plugin)
