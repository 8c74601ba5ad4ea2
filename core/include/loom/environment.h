// Environment: the loaded plugins and their EP factories. Create one per
// process (or per configuration); sessions share it. Thread-safe after
// creation.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "loom/config.h"
#include "loom/status.h"

namespace loom {

namespace plugin_host {
class PluginRegistry;
}
namespace exec {
class ThreadPool;
}

// What the plugin host found in one library.
struct PluginReport {
  std::string path;
  bool loaded = false;
  std::string refusal;  // why it was refused, when !loaded
  std::string name;     // plugin's own name
  std::string version;  // plugin's own version
  std::string abi;      // "MAJOR.MINOR" the plugin was built with
  // For one of several builds of a plugin in a directory: why this one was
  // chosen (the others' scores); empty otherwise.
  std::string variant;
  struct Device {
    std::string name;
    std::string memory;
    bool host_accessible = true;
  };
  struct Factory {
    std::string name;
    std::vector<Device> devices;
    std::string unavailable_reason;
  };
  std::vector<Factory> factories;
  // Custom-op domains the plugin declares. A domain with a broken schema,
  // or one another plugin already declared, is refused as a whole.
  struct CustomOpDomain {
    std::string name;
    std::vector<std::string> ops;  // "Op" or "Op@since" when since > 1
    size_t kernels = 0;
    std::string refusal;  // empty when usable
  };
  std::vector<CustomOpDomain> custom_op_domains;
};

class Environment {
 public:
  // Scans the default plugin directory and config.plugin_dirs. A plugin that
  // fails to load is recorded with its reason; only a plugin directory that
  // does not exist (when named in the config) is an error.
  static Expected<std::shared_ptr<Environment>> create(const Config& config);
  ~Environment();

  const Config& config() const;
  // Every library found, loaded or refused.
  const std::vector<PluginReport>& plugin_reports() const;
  // Names of providers usable here (loaded, with at least one device).
  std::vector<std::string> available_providers() const;
  // The default plugin directory (build tree or install tree).
  static std::string default_plugin_dir();

  plugin_host::PluginRegistry& registry() const;
  // The inter-op pool shared by parallel sessions when the config says
  // threads.shared_inter_op; made on first use, sized from the config.
  std::shared_ptr<exec::ThreadPool> shared_inter_op_pool() const;

 private:
  Environment();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace loom
