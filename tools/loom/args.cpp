#include "args.h"

#include <algorithm>
#include <iostream>

namespace loom::tools {

std::optional<std::string> ParsedArgs::value(const std::string& flag) const {
  auto it = values_.find(flag);
  if (it == values_.end() || it->second.empty()) return std::nullopt;
  return it->second.back();
}

std::vector<std::string> ParsedArgs::values(const std::string& flag) const {
  auto it = values_.find(flag);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

Expected<ParsedArgs> parse_args(const CommandSpec& spec, int argc, char** argv) {
  ParsedArgs parsed;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      parsed.help_ = true;
      continue;
    }
    if (arg.rfind("--", 0) != 0 || arg.size() == 2)
      return invalid_argument("unexpected argument '" + arg + "'");
    std::string name = arg.substr(2);
    std::optional<std::string> inline_value;
    if (auto eq = name.find('='); eq != std::string::npos) {
      inline_value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    const FlagSpec* flag = nullptr;
    for (const auto& f : spec.flags)
      if (f.name == name) flag = &f;
    if (flag == nullptr) return invalid_argument("unknown option '--" + name + "'");
    if (!flag->repeatable && parsed.values_.count(name))
      return invalid_argument("option '--" + name + "' given more than once");
    auto& slot = parsed.values_[name];
    if (flag->value_name.empty()) {
      if (inline_value) return invalid_argument("option '--" + name + "' takes no value");
      slot.emplace_back();
      continue;
    }
    if (inline_value) {
      slot.push_back(*inline_value);
    } else {
      if (i + 1 >= argc) return invalid_argument("option '--" + name + "' needs a value (" + flag->value_name + ")");
      slot.push_back(argv[++i]);
    }
  }
  return parsed;
}

std::string command_usage(const CommandSpec& spec) {
  std::string s = "usage: loom " + spec.name + " " + spec.synopsis + "\n\n" + spec.summary + "\n\noptions:\n";
  size_t width = 0;
  auto label = [](const FlagSpec& f) { return "--" + f.name + (f.value_name.empty() ? "" : " " + f.value_name); };
  for (const auto& f : spec.flags) width = std::max(width, label(f).size());
  for (const auto& f : spec.flags) {
    std::string l = label(f);
    s += "  " + l + std::string(width - l.size() + 2, ' ') + f.help + "\n";
  }
  s += "  --help" + std::string(width > 6 ? width - 6 + 2 : 2, ' ') + "show this help\n";
  return s;
}

namespace {
std::string one_line(const std::string& message) {
  std::string out;
  out.reserve(message.size());
  for (size_t i = 0; i < message.size(); ++i) {
    const char c = message[i];
    if (c == '\r') continue;
    if (c == '\n') {
      if (i + 1 < message.size()) out += "; ";
      continue;
    }
    out += c;
  }
  return out;
}
}  // namespace

int report_failure(const std::string& command, const std::string& message) {
  std::cout.flush();
  std::cerr << "loom " << command << ": " << one_line(message) << std::endl;
  return kExitFailure;
}

int report_usage_error(const CommandSpec& spec, const std::string& message) {
  std::cerr << "loom " << spec.name << ": " << one_line(message) << " (see 'loom " << spec.name << " --help')"
            << std::endl;
  return kExitUsage;
}

std::vector<std::string> split_list(const std::string& text, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(sep, start);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(start, end - start);
    const auto b = item.find_first_not_of(" \t");
    const auto e = item.find_last_not_of(" \t");
    if (b != std::string::npos) out.push_back(item.substr(b, e - b + 1));
    start = end + 1;
  }
  return out;
}

Expected<Config> load_config(const ParsedArgs& args) {
  Config config;
  if (auto path = args.value("config")) {
    LOOM_ASSIGN_OR_RETURN(config, Config::from_json_file(*path));
  }
  LOOM_RETURN_IF_ERROR(config.apply_environment());
  // Commands with --profile: profiling on, written there (end_profiling).
  if (auto path = args.value("profile")) {
    config.profiling_enabled = true;
    config.profiling_path = *path;
  }
  return config;
}

Expected<std::shared_ptr<Environment>> create_environment(const ParsedArgs& args) {
  LOOM_ASSIGN_OR_RETURN(Config config, load_config(args));
  return Environment::create(config);
}

}  // namespace loom::tools
