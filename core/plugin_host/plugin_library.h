// One loaded plugin library. Loading is defensive: every way a library can be
// unusable (cannot be opened, missing entry symbol, wrong ABI major, table too
// small, missing required slot, failing init, bad factory table) becomes a
// refusal message that names the problem; the process keeps running.
#pragma once

#include <boost/dll/shared_library.hpp>
#include <memory>
#include <string>
#include <vector>

#include "loom/environment.h"
#include "loom/plugin_api.h"
#include "loom/status.h"

namespace loom::plugin_host {

// The steps of loading, in order. load() reports the step it reached: on a
// refusal, the step that refused; on success, kLoaded.
enum class LoadStep { kOpen, kEntry, kAbiVersion, kPluginTable, kInit, kFactories, kLoaded };

class PluginLibrary {
 public:
  // Returns the library or a refusal (the Status message is the reason).
  // When `reached` is given, it is set to the step reached (see LoadStep).
  // load = open + initialize.
  static Expected<std::unique_ptr<PluginLibrary>> load(const std::string& path, LoadStep* reached = nullptr);
  // The steps up to the plugin table (entry, version, required slots); the
  // plugin is not initialised yet, so name() and score() can pick among
  // variant builds before any of them runs init.
  static Expected<std::unique_ptr<PluginLibrary>> open(const std::string& path, LoadStep* reached = nullptr);
  // init and the factory table, once, after open.
  Status initialize(LoadStep* reached = nullptr);
  // LOOM_PluginApi.score (1 when the plugin has none).
  int32_t score() const;
  // Releases the plugin state, then unloads the library.
  ~PluginLibrary();

  const std::string& path() const { return path_; }
  const LOOM_PluginApi& api() const { return *api_; }
  uint32_t agreed_minor() const { return agreed_minor_; }
  // What init returned; passed to every other plugin slot.
  void* state() const { return state_; }
  const std::vector<const LOOM_EpFactory*>& factories() const { return factories_; }
  std::string name() const;
  std::string version() const;

 private:
  PluginLibrary() = default;
  std::string path_;
  boost::dll::shared_library library_;
  const LOOM_PluginApi* api_ = nullptr;  // set by open
  bool initialised_ = false;             // init succeeded: the destructor releases
  void* state_ = nullptr;
  uint32_t agreed_minor_ = 0;
  std::vector<const LOOM_EpFactory*> factories_;
};

}  // namespace loom::plugin_host
