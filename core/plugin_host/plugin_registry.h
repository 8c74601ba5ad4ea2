// The plugins found in the configured directories and the providers (EP
// factories) they offer. Built once per Environment; read-only afterwards.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "loom/environment.h"
#include "onnx/op_schemas.h"
#include "plugin_host/custom_op_domain.h"
#include "plugin_host/plugin_library.h"

namespace loom::plugin_host {

struct Provider {
  std::string name;
  const LOOM_EpFactory* factory = nullptr;
  const PluginLibrary* library = nullptr;
  // Copied from the plugin (strings still point into it); only the fields
  // this core knows are kept.
  struct Device {
    std::string name;
    LOOM_MemoryInfo memory{};
  };
  std::vector<Device> devices;
  std::string unavailable_reason;
  // Held around each step of this provider's EPs that declared
  // LOOM_EP_FLAG_NO_CONCURRENT_RUNS (all sessions of the environment;
  // recursive, as a control-flow step runs its body's steps inside).
  std::shared_ptr<std::recursive_mutex> serial_steps = std::make_shared<std::recursive_mutex>();
};

// A factory of a loaded library as a provider: its devices as get_devices
// reports them, each description checked. A factory whose devices cannot be
// read, or that has none, gets no devices and an unavailable_reason.
// `options` are the provider's configured options (get_devices sees them).
Provider read_provider(const LOOM_EpFactory* factory, const PluginLibrary& library,
                       const std::map<std::string, std::string>& options = {});

class PluginRegistry {
 public:
  ~PluginRegistry();
  // Per-provider options from the configuration, handed to each factory's
  // get_devices when its library loads: set before scanning.
  void set_provider_options(std::map<std::string, std::map<std::string, std::string>> options) {
    provider_options_ = std::move(options);
  }
  // Loads every shared library in `dir` (sorted by name); of several builds
  // of one plugin (same name) only the one with the highest score on this
  // machine (LOOM_PluginApi.score) is initialised, the others are reported
  // as not chosen. Returns an error only when the directory does not exist
  // or cannot be read.
  Status scan_directory(const std::string& dir);
  // Loads one library; refusals are recorded, not returned.
  void load_library(const std::string& path);

  const std::vector<PluginReport>& reports() const { return reports_; }
  const Provider* find(const std::string& name) const;
  // Providers in discovery order.
  const std::vector<Provider>& providers() const { return providers_; }
  // The custom-op schemas of every usable domain (with ONNX's behind them),
  // for loading models; NULL when no plugin declares custom ops.
  std::shared_ptr<onnxio::OpSchemas> op_schemas() const { return op_schemas_->empty() ? nullptr : op_schemas_; }
  // Custom-op kernels, for the EP instances of their providers.
  const std::vector<CustomKernel>& custom_kernels() const { return custom_kernels_; }

 private:
  // Initialises an opened library and records its providers.
  void add_library(std::unique_ptr<PluginLibrary> lib, const std::string& variant_note);
  void refuse(const std::string& path, const std::string& why, bool quiet = false);
  void add_custom_op_domains(const PluginLibrary& lib, PluginReport& report);

  std::vector<std::unique_ptr<PluginLibrary>> libraries_;
  std::vector<Provider> providers_;
  std::vector<PluginReport> reports_;
  std::shared_ptr<onnxio::OpSchemas> op_schemas_ = std::make_shared<onnxio::OpSchemas>();
  std::vector<CustomKernel> custom_kernels_;
  std::map<std::string, std::map<std::string, std::string>> provider_options_;
};

}  // namespace loom::plugin_host
