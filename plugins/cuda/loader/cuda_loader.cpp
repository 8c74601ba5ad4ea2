// The cuda plugin's entry library (libc and the header-only SDK): on a
// machine without the CUDA driver (libcuda.so.1) it offers a "cuda"
// provider with no device and says why, without loading anything heavy (the
// CUDA libraries cost ~140 ms and ~200 MB of mappings in every process that
// scans the plugin folder) -- unless the provider's options ask for a
// virtual device (placement without a GPU): then it loads the
// implementation and hands the factory's calls to it. With the driver it
// loads the CUDA libraries first (loader/preflight.h, from the folders
// loader/library_search.h names), then the implementation from its
// subfolder, and forwards the entry call; a missing library refuses the
// plugin with its name and version.
#include <dlfcn.h>

#include <mutex>
#include <string>

#include "common/implementation_loader.h"
#include "loader/library_search.h"
#include "loader/preflight.h"
#include "loom/plugin_api.h"

namespace {

constexpr char kImplementation[] = "cuda/libloom_cuda_impl.so";
constexpr char kNoDriver[] = "no usable CUDA device: no CUDA driver on this machine (libcuda.so.1 not found)";

bool has_driver() {
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
  if (driver == nullptr) driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (driver == nullptr) return false;
  dlclose(driver);
  return true;
}

std::string library_dir() { return LOOM_CUDA_LIBRARY_DIR; }

// The host table of the process (set by the entry call; one host per process).
const LOOM_HostApi* g_host = nullptr;

LOOM_Status* error(int32_t code, const std::string& message) {
  return g_host->status_create(code, {message.data(), message.size()});
}

// The provider without a driver: no device and the reason, or, for a
// virtual device, the implementation's own factory behind this one.
struct Deferred {
  uint32_t agreed_minor = 0;
  std::mutex mutex;
  std::string reason = kNoDriver;
  const LOOM_PluginApi* impl = nullptr;
  void* impl_state = nullptr;
  const LOOM_EpFactory* impl_factory = nullptr;
  LOOM_EpFactory factory{};
  const LOOM_EpFactory* factory_list[1] = {&factory};
};

bool wants_virtual_device(const LOOM_EpFactory_GetDevices_Args* args) {
  if (!LOOM_HAS_FIELD(args, LOOM_EpFactory_GetDevices_Args, option_count)) return false;
  for (uint64_t i = 0; i < args->option_count; ++i) {
    const std::string key(args->options[i].key.data, args->options[i].key.size);
    const std::string value(args->options[i].value.data, args->options[i].value.size);
    if (key == "virtual_device") return value == "true" || value == "1" || value == "on";
  }
  return false;
}

// Loads the implementation and finds its cuda factory; on failure says why
// in d.reason. Called with d.mutex held.
bool load_implementation(Deferred& d) {
  if (d.impl_factory != nullptr) return true;
  const std::string missing = loom::cuda_loader::preflight(loom::cuda_loader::required_libraries(),
                                                           loom::cuda_loader::library_search_dirs(library_dir()));
  if (!missing.empty()) {
    d.reason = std::string(kNoDriver) + "; a virtual device needs the CUDA libraries: " + missing;
    return false;
  }
  const std::string path = loom::plugin_loader::own_directory() + "/" + kImplementation;
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  auto entry = handle != nullptr ? reinterpret_cast<LOOM_PluginEntryFn>(dlsym(handle, LOOM_PLUGIN_ENTRY_SYMBOL))
                                 : nullptr;
  LOOM_PluginEntry_Args ea{};
  ea.struct_size = LOOM_PluginEntry_Args_STRUCT_SIZE;
  ea.host = g_host;
  if (entry == nullptr || entry(&ea) != nullptr || ea.plugin == nullptr ||
      ea.plugin->abi_major != LOOM_ABI_VERSION_MAJOR) {
    const char* why = handle == nullptr ? dlerror() : nullptr;
    d.reason = std::string(kNoDriver) + "; cannot load " + path + (why ? std::string(": ") + why : "");
    return false;
  }
  LOOM_Plugin_Init_Args ia{};
  ia.struct_size = LOOM_Plugin_Init_Args_STRUCT_SIZE;
  ia.agreed_minor = d.agreed_minor < ea.plugin->abi_minor ? d.agreed_minor : ea.plugin->abi_minor;
  if (LOOM_Status* st = ea.plugin->init(&ia)) {
    g_host->status_release(st);
    d.reason = std::string(kNoDriver) + "; the implementation failed to initialise";
    return false;
  }
  LOOM_Plugin_GetEpFactories_Args fa{};
  fa.struct_size = LOOM_Plugin_GetEpFactories_Args_STRUCT_SIZE;
  if (LOOM_Status* st = ea.plugin->get_ep_factories(ia.plugin_state, &fa)) g_host->status_release(st);
  for (uint64_t i = 0; i < fa.factory_count; ++i)
    if (fa.factories[i] != nullptr && std::string(fa.factories[i]->name.data, fa.factories[i]->name.size) == "cuda")
      d.impl_factory = fa.factories[i];
  d.impl = ea.plugin;
  d.impl_state = ia.plugin_state;
  if (d.impl_factory == nullptr) d.reason = std::string(kNoDriver) + "; the implementation offers no cuda factory";
  return d.impl_factory != nullptr;
}

LOOM_Status* get_devices(void* state, LOOM_EpFactory_GetDevices_Args* args) {
  Deferred& d = *static_cast<Deferred*>(state);
  std::lock_guard<std::mutex> lock(d.mutex);
  if (wants_virtual_device(args) && load_implementation(d))
    return d.impl_factory->get_devices(d.impl_factory->state, args);
  args->devices = nullptr;
  args->device_count = 0;
  args->unavailable_reason = {d.reason.data(), d.reason.size()};
  return nullptr;
}

LOOM_Status* create_ep(void* state, LOOM_EpFactory_CreateEp_Args* args) {
  Deferred& d = *static_cast<Deferred*>(state);
  if (d.impl_factory == nullptr) return error(LOOM_STATUS_NOT_FOUND, "cuda: no CUDA driver on this machine");
  return d.impl_factory->create_ep(d.impl_factory->state, args);
}

void release_ep(void* state, LOOM_Ep* ep) {
  Deferred& d = *static_cast<Deferred*>(state);
  if (d.impl_factory != nullptr) d.impl_factory->release_ep(d.impl_factory->state, ep);
}

LOOM_Status* deferred_init(LOOM_Plugin_Init_Args* args) {
  auto* d = new Deferred();
  d->agreed_minor = args->agreed_minor;
  d->factory.struct_size = LOOM_EpFactory_STRUCT_SIZE;
  d->factory.state = d;
  d->factory.name = {"cuda", 4};
  d->factory.get_devices = get_devices;
  d->factory.create_ep = create_ep;
  d->factory.release_ep = release_ep;
  args->plugin_state = d;
  return nullptr;
}

void deferred_release(void* state) {
  auto* d = static_cast<Deferred*>(state);
  if (d->impl != nullptr) d->impl->release(d->impl_state);
  delete d;
}

LOOM_Status* deferred_factories(void* state, LOOM_Plugin_GetEpFactories_Args* args) {
  auto* d = static_cast<Deferred*>(state);
  args->factories = d->factory_list;
  args->factory_count = 1;
  return nullptr;
}

LOOM_Status* deferred_entry(LOOM_PluginEntry_Args* args) {
  static const LOOM_PluginApi api = {LOOM_PluginApi_STRUCT_SIZE, nullptr, LOOM_ABI_VERSION_MAJOR,
                                     LOOM_ABI_VERSION_MINOR, {"cuda", 4}, {"0.2.0", 5}, &deferred_init,
                                     &deferred_release, &deferred_factories, nullptr, nullptr};
  args->plugin = &api;
  return nullptr;
}

}  // namespace

extern "C" LOOM_EXPORT LOOM_Status* loom_plugin_entry(LOOM_PluginEntry_Args* args) {
  g_host = args->host;
  if (!has_driver()) return deferred_entry(args);
  const std::string missing = loom::cuda_loader::preflight(loom::cuda_loader::required_libraries(),
                                                           loom::cuda_loader::library_search_dirs(library_dir()));
  if (!missing.empty()) return loom::plugin_loader::fail(args, "cuda: " + missing);
  return loom::plugin_loader::forward(args, "cuda", kImplementation);
}
