// The cuda plugin's entry library (libc and the header-only SDK): on a
// machine without the CUDA driver (libcuda.so.1) it offers a "cuda"
// provider with no device and says why, without loading anything heavy (the
// CUDA libraries cost ~140 ms and ~200 MB of mappings in every process that
// scans the plugin folder). With the driver it checks that the libraries
// the implementation links are there (loader/preflight.h), then loads the
// implementation from its subfolder and forwards the entry call; a missing
// library refuses the plugin with its name and version.
#include <dlfcn.h>

#include <string>

#include "common/implementation_loader.h"
#include "loader/preflight.h"
#include "loom/sdk.h"

namespace {

constexpr char kImplementation[] = "cuda/libloom_cuda_impl.so";

// The provider on a machine without the driver: no device, and the reason.
class NoDriverFactory : public loom::sdk::EpFactory {
 public:
  NoDriverFactory() : EpFactory("cuda") {}
  std::vector<loom::sdk::DeviceSpec> devices() override { return {}; }
  std::string unavailable_reason() override {
    return "no usable CUDA device: no CUDA driver on this machine (libcuda.so.1 not found)";
  }
  std::unique_ptr<loom::sdk::Ep> create_ep(size_t, const loom::sdk::Options&) override {
    throw loom::sdk::Error("cuda: no CUDA driver on this machine", LOOM_STATUS_NOT_FOUND);
  }
};

std::unique_ptr<loom::sdk::Plugin> create_no_driver_plugin() {
  auto p = std::make_unique<loom::sdk::Plugin>();
  p->add_factory(std::make_unique<NoDriverFactory>());
  return p;
}

// What LOOM_SDK_DEFINE_PLUGIN would define, under another name: this
// library's entry decides between it and the implementation.
LOOM_Status* no_driver_entry(LOOM_PluginEntry_Args* args) {
  using Entry = loom::sdk::detail::PluginEntry<create_no_driver_plugin>;
  static const LOOM_PluginApi api = {LOOM_PluginApi_STRUCT_SIZE, nullptr, LOOM_ABI_VERSION_MAJOR,
                                     LOOM_ABI_VERSION_MINOR, {"cuda", 4}, {"0.1.0", 5}, &Entry::init,
                                     &Entry::release, &Entry::factories, nullptr};
  loom::sdk::host_slot() = args->host;
  args->plugin = &api;
  return nullptr;
}

bool has_driver() {
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
  if (driver == nullptr) driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (driver == nullptr) return false;
  dlclose(driver);
  return true;
}

}  // namespace

extern "C" LOOM_EXPORT LOOM_Status* loom_plugin_entry(LOOM_PluginEntry_Args* args) {
  if (!has_driver()) return no_driver_entry(args);
  const std::string missing =
      loom::cuda_loader::preflight(loom::cuda_loader::required_libraries(), {LOOM_CUDA_LIBRARY_DIR});
  if (!missing.empty()) return loom::plugin_loader::fail(args, "cuda: " + missing);
  return loom::plugin_loader::forward(args, "cuda", kImplementation);
}
