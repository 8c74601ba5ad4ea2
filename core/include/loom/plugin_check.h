// Validating one plugin library without running a model (`loom plugins
// --check`): the library is loaded the way the plugin host loads it, then each
// of its EP factories, devices, EP instances (created with no options),
// kernel tables, allocators, data transfers, streams and custom-op schemas is
// checked against the C ABI's contract, and everything is released again.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "loom/config.h"
#include "loom/tensor.h"

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

struct ModelCheckOptions {
  std::string model_path;
  std::map<std::string, Tensor> inputs;  // every input the model needs
  // Float values match when |got - reference| <= atol + rtol * |reference|
  // (at least 1e-2 each for float16 / bfloat16); other types must be equal.
  double atol = 1e-4, rtol = 1e-3;
  Config config;  // plugin_dirs, provider_options, threads... (providers and fallback are set per check)
};

// Runs the plugin's kernels against the reference EP on a model (`loom
// plugins --check PATH.so --model M.onnx`): each node a provider of the
// plugin claims is run on its own on that provider, fed the reference EP's
// values of its inputs, and its outputs compared with the reference's
// (element type, shape, values); then the whole model, optimized, with the
// provider first, is compared output by output. One item per node that
// differs, fails or cannot be checked alone, and a summary per provider.
PluginCheckReport check_plugin_on_model(const std::string& plugin_path, const ModelCheckOptions& options);

}  // namespace loom
