// The CUDA EP (plugins/cuda): a kernel EP on the device's own memory, with
// asynchronous streams and timed events. Devices come from the CUDA
// runtime; with no driver or no GPU the provider lists none and says why
// (the normal answer on a machine without a GPU, not an error), unless the
// option virtual_device asks for a device to partition against.
#include <cuda_runtime.h>

#include <memory>
#include <string>

#include "cuda_device.h"
#include "ep_context.h"
#include "graph_capture.h"
#include "kernel_table.h"
#include "loom/sdk.h"
#include "placement.h"

namespace loom::cuda {
namespace {

constexpr char kVirtualDeviceName[] = "virtual CUDA device (placement only)";

class CudaEp : public sdk::Ep {
 public:
  CudaEp(int device, bool is_virtual, const EpOptions& options)
      : device_(device, is_virtual, static_cast<size_t>(options.pinned_staging_mb) << 20, options.host_wait_blocks),
        table_(context_) {
    context_.device = device;
    context_.options = options;
    context_.conv_workspace_bytes = conv_workspace_bytes(options, is_virtual ? 0 : free_device_memory(device));
    register_all_kernels(table_);
  }
  const sdk::KernelRegistry* kernels() const override { return &table_.registry(); }
  bool has_capability() const override { return true; }
  void claim(const sdk::Graph& g, sdk::ClaimSink& sink) override {
    const std::vector<NodePlacement> placement = place_nodes(table_, g);
    for (size_t i = 0; i < placement.size(); ++i) {
      const uint64_t id = g.node(i).id();
      if (placement[i].claim) sink.claim_node(id, placement[i].reason);
      else sink.decline(id, placement[i].reason);
    }
  }
  const LOOM_Allocator* allocator() const override { return device_.allocator(); }
  const LOOM_DataTransfer* data_transfer() const override { return device_.data_transfer(); }
  LOOM_Stream* create_stream() override { return device_.create_stream(); }
  LOOM_Event* create_event() override { return device_.create_event(); }
  bool captures_runs() const override { return context_.options.cuda_graph && !device_.is_virtual(); }
  void begin_capture(LOOM_Stream* stream) override { begin_graph_capture(stream); }
  LOOM_CapturedWork* end_capture(LOOM_Stream* stream) override { return end_graph_capture(stream); }

 private:
  EpContext context_;  // before table_, which keeps a reference
  DeviceObjects device_;
  KernelTable table_;
};

class CudaFactory : public sdk::EpFactory {
 public:
  CudaFactory() : EpFactory("cuda") {}
  std::vector<sdk::DeviceSpec> devices_for(const sdk::Options& options) override {
    const EpOptions parsed = parse_ep_options(options);
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) reason_ = std::string("no usable CUDA device: ") + cudaGetErrorString(e);
    else if (count == 0) reason_ = "no CUDA device found";
    if (e != cudaSuccess || count == 0) {
      if (!parsed.virtual_device) return {};
      virtual_ = true;
      return {sdk::DeviceSpec{kVirtualDeviceName, kMemoryName, 0, false}};
    }
    std::vector<sdk::DeviceSpec> out;
    for (int i = 0; i < count; ++i) {
      cudaDeviceProp p{};
      const std::string name = cudaGetDeviceProperties(&p, i) == cudaSuccess ? p.name : "CUDA device";
      out.push_back(sdk::DeviceSpec{name + " (" + std::to_string(i) + ")", kMemoryName, i, false});
    }
    device_count_ = count;
    return out;
  }
  std::string unavailable_reason() override { return reason_; }
  std::unique_ptr<sdk::Ep> create_ep(size_t device_index, const sdk::Options& options) override {
    const EpOptions parsed = parse_ep_options(options);
    int device = static_cast<int>(device_index);
    if (parsed.device_id != 0) {
      if (!virtual_ && parsed.device_id >= device_count_)
        throw sdk::Error("cuda: device_id " + std::to_string(parsed.device_id) + " but this machine has " +
                             std::to_string(device_count_) + " CUDA device(s)",
                         LOOM_STATUS_INVALID_ARGUMENT);
      device = parsed.device_id;
    }
    return std::make_unique<CudaEp>(device, virtual_, parsed);
  }

 private:
  std::string reason_;
  bool virtual_ = false;
  int device_count_ = 0;
};

std::unique_ptr<sdk::Plugin> create_plugin() {
  auto p = std::make_unique<sdk::Plugin>();
  p->add_factory(std::make_unique<CudaFactory>());
  return p;
}

}  // namespace
}  // namespace loom::cuda

LOOM_SDK_DEFINE_PLUGIN("cuda", "0.2.0", loom::cuda::create_plugin)
