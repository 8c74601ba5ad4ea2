// `loom plugins`: what the plugin host found, loaded or refused, and why.
#include <iostream>
#include <string>
#include <vector>

#include "commands.h"
#include "loom/plugin_check.h"
#include "loom/session.h"
#include "model_feeds.h"

namespace loom::tools {
namespace {

const char* kName = "plugins";

void print_report(const PluginReport& r) {
  std::cout << r.path << "\n";
  if (!r.loaded) {
    std::cout << "  status:  refused: " << r.refusal << "\n";
    return;
  }
  std::cout << "  status:  loaded\n";
  std::cout << "  name:    " << r.name << "\n";
  std::cout << "  version: " << r.version << "\n";
  std::cout << "  abi:     " << r.abi << "\n";
  if (!r.variant.empty()) std::cout << "  variant: " << r.variant << "\n";
  if (r.factories.empty()) std::cout << "  factories: none\n";
  for (const auto& f : r.factories) {
    std::cout << "  factory " << f.name;
    if (f.devices.empty()) {
      std::cout << ": unavailable: " << (f.unavailable_reason.empty() ? "no devices" : f.unavailable_reason) << "\n";
      continue;
    }
    std::cout << "\n";
    for (const auto& d : f.devices) {
      std::cout << "    device " << d.name;
      if (!d.memory.empty()) std::cout << "  memory: " << d.memory;
      std::cout << (d.host_accessible ? "  host-accessible" : "") << "\n";
    }
  }
  for (const auto& d : r.custom_op_domains) {
    std::string ops;
    for (const std::string& op : d.ops) ops += (ops.empty() ? "" : ", ") + op;
    std::cout << "  custom ops " << (d.name.empty() ? "(unnamed domain)" : d.name) << ": "
              << (ops.empty() ? "none" : ops) << "; " << d.kernels << " kernel(s)";
    if (!d.refusal.empty()) std::cout << "; refused: " << d.refusal;
    std::cout << "\n";
  }
}

void print_checklist(const PluginCheckReport& report) {
  for (const auto& item : report.items) {
    std::string level = check_level_name(item.level);
    std::cout << "  " << level << std::string(6 - level.size(), ' ') << item.what
              << (item.detail.empty() ? "" : ": " + item.detail) << "\n";
  }
  const size_t failures = report.failures(), warnings = report.warnings();
  std::cout << "result: " << (failures ? "FAIL" : "ok") << " (" << failures << (failures == 1 ? " failure, " : " failures, ")
            << warnings << (warnings == 1 ? " warning)" : " warnings)") << "\n";
}

// `--check PATH.so`: one checklist per library; exit 1 if any check failed.
int check_main(const std::vector<std::string>& paths) {
  bool all_ok = true;
  for (size_t i = 0; i < paths.size(); ++i) {
    PluginCheckReport report = check_plugin(paths[i]);
    std::cout << (i ? "\n" : "") << "checking " << report.path << "\n";
    print_checklist(report);
    all_ok = all_ok && report.ok();
  }
  return all_ok ? kExitOk : kExitFailure;
}

// `--check PATH.so --model M.onnx`: the plugin's kernels against the
// reference EP on the model's inputs (given, or random).
int check_on_model_main(const ParsedArgs& args) {
  const std::vector<std::string> paths = args.values("check");
  if (paths.size() != 1) return report_usage_error(plugins_command().spec, "--model checks exactly one --check PATH.so");
  auto feeds = parse_feed_request(args);
  if (!feeds) return report_usage_error(plugins_command().spec, feeds.status().message());
  auto config = load_config(args);
  if (!config) return report_failure(kName, config.status().message());
  ModelCheckOptions options;
  options.model_path = *args.value("model");
  options.config = *config;
  if (auto t = args.value("tolerance")) {
    char* end = nullptr;
    options.atol = options.rtol = std::strtod(t->c_str(), &end);
    if (end == t->c_str() || *end != '\0' || !(options.atol >= 0))
      return report_usage_error(plugins_command().spec, "--tolerance: expected a number >= 0, got '" + *t + "'");
  }
  // The inputs, read or made once so every run of the check sees the same.
  Config reference = *config;
  reference.providers = {"reference"};
  auto env = Environment::create(reference);
  if (!env) return report_failure(kName, env.status().message());
  auto session = Session::create(*env, options.model_path);
  if (!session) return report_failure(kName, session.status().message());
  auto values = gather_feeds(**session, *feeds, true);
  if (!values) return report_failure(kName, values.status().message());
  for (const auto& [name, value] : *values) {
    if (!value.is_tensor())
      return report_failure(kName, "input '" + name + "' is not a tensor; --model checks tensor inputs only");
    options.inputs[name] = value.tensor();
  }
  PluginCheckReport report = check_plugin_on_model(paths[0], options);
  std::cout << "checking " << report.path << " on " << options.model_path << "\n";
  print_checklist(report);
  return report.ok() ? kExitOk : kExitFailure;
}

int plugins_main(const ParsedArgs& args) {
  if (args.has("check") && args.has("model")) return check_on_model_main(args);
  if (args.has("model")) return report_usage_error(plugins_command().spec, "--model needs --check PATH.so");
  if (args.has("check")) return check_main(args.values("check"));
  auto config = load_config(args);
  if (!config) return report_failure(kName, config.status().message());
  auto env = Environment::create(*config);
  if (!env) return report_failure(kName, env.status().message());

  std::cout << "plugin directories:\n  " << Environment::default_plugin_dir() << " (default)\n";
  for (const auto& d : config->plugin_dirs) std::cout << "  " << d << "\n";
  std::cout << "\n";
  const auto& reports = (*env)->plugin_reports();
  if (reports.empty()) std::cout << "no plugin libraries found\n";
  for (const auto& r : reports) print_report(r);

  std::string available;
  for (const auto& p : (*env)->available_providers()) available += (available.empty() ? "" : ", ") + p;
  std::cout << "\navailable providers: " << (available.empty() ? "none" : available) << "\n";
  return kExitOk;
}

}  // namespace

Command plugins_command() {
  return Command{CommandSpec{"plugins",
                             "List the plugin libraries found, loaded or refused, with their providers and devices; "
                             "or validate one library (--check).",
                             "[--config F] | --check PATH.so [--check PATH.so ...] | --check PATH.so --model M.onnx "
                             "[--input NAME=PATH.pb ...] [--tolerance T]",
                             {{"config", "F", "JSON configuration file (its plugin_dirs are scanned too)"},
                              {"check", "PATH.so",
                               "validate exactly this plugin library without running a model: entry symbol, ABI "
                               "version, required slots, devices, EP creation, kernel table, allocator / data "
                               "transfer, streams, custom-op schemas; prints one ok / warn / FAIL line per check "
                               "and exits 1 if any check failed (repeatable)",
                               true},
                              {"model", "M.onnx",
                               "with one --check: run each node the plugin's providers claim in this model on its "
                               "own, fed the reference EP's values of its inputs, and compare its outputs with the "
                               "reference EP's; then the whole model with the plugin first; exit 1 on any difference"},
                              {"input", "NAME=PATH.pb", "--model: feed input NAME from a TensorProto file "
                                                        "(repeatable); inputs not given get random values", true},
                              {"dim", "SYMBOL=VALUE", "--model: size of a symbolic input dimension for random "
                                                      "inputs (default 1; repeatable)", true},
                              {"seed", "N", "--model: seed for random inputs (default 0)"},
                              {"tolerance", "T", "--model: float values match within T + T x |reference| "
                                                 "(default 1e-4 absolute + 1e-3 relative)"}}},
                 plugins_main};
}

}  // namespace loom::tools
