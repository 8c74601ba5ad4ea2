// Validating one plugin library without running a model (`loom plugins
// --check`): the library is loaded the way the plugin host loads it, then each
// of its EP factories, devices, EP instances (created with no options),
// kernel tables, allocators, data transfers, streams and custom-op schemas is
// checked against the C ABI's contract, and everything is released again.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace loom {

enum class CheckLevel { kOk, kWarn, kFail };

// "ok", "warn" or "FAIL".
const char* check_level_name(CheckLevel level);

struct PluginCheckItem {
  CheckLevel level = CheckLevel::kOk;
  std::string what;    // the check, e.g. "entry symbol", "'reference' kernel table"
  std::string detail;  // what was found; for a failure, the reason (the host's own refusal message where it has one)
};

struct PluginCheckReport {
  std::string path;
  std::vector<PluginCheckItem> items;  // in the order the checks ran
  size_t failures() const;
  size_t warnings() const;
  bool ok() const { return failures() == 0; }
};

// Checks the library at `path` (exactly that file; the plugin directories are
// not scanned). Never throws; a library that cannot be loaded yields a report
// whose last item is a failure naming why. Not thread-safe with respect to
// other loads of the same library. A plugin that crashes in its own code
// still takes the process down.
PluginCheckReport check_plugin(const std::string& path);

}  // namespace loom
