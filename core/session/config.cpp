#include "loom/config.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

namespace loom {
namespace {

using Json = nlohmann::json;

constexpr const char* kFallbackNames[] = {"allow", "warn", "deny"};
constexpr const char* kOptimizationNames[] = {"disabled", "basic", "extended", "layout", "all"};
constexpr const char* kArenaGrowths[] = {"double", "exact"};
constexpr const char* kExecutionModes[] = {"sequential", "parallel"};
constexpr const char* kPrecisionNames[] = {"fp32", "fp16"};
constexpr const char* kLogLevels[] = {"trace", "debug", "info", "warn", "error", "off"};

// Limits on a config file, which may come from a stranger: its size, how
// deep its values nest (rendering or walking a value 100,000 levels deep
// overflows the stack), and thread counts (a million threads crash libgomp
// or the OS's thread limit rather than fail).
constexpr size_t kMaxConfigBytes = size_t{16} << 20;
constexpr int kMaxNesting = 64;
constexpr int kMaxThreads = 1024;

// The deepest nesting of arrays and objects in `json` (outside strings) and
// the byte offset where it first passes `limit`, or -1.
int64_t first_too_deep(const std::string& json, int limit) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '[' || c == '{') {
      if (++depth > limit) return static_cast<int64_t>(i);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return -1;
}

// A JSON value rendered for an error message, kept short so that a huge
// array given where a string belongs does not flood the message.
std::string describe(const Json& v) {
  std::string s = v.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

template <size_t N>
std::string one_of(const char* const (&names)[N]) {
  std::string s;
  for (size_t i = 0; i < N; ++i) s += std::string(i ? ", " : "") + "\"" + names[i] + "\"";
  return s;
}

template <size_t N>
int index_of(const char* const (&names)[N], const std::string& value) {
  for (size_t i = 0; i < N; ++i)
    if (value == names[i]) return static_cast<int>(i);
  return -1;
}

// Walks the parsed document; every error names "<source>: <key path>".
class ConfigReader {
 public:
  ConfigReader(std::string source, Config::Source trust) : source_(std::move(source)), trust_(trust) {}

  Status read(const Json& root, Config& config) {
    if (!root.is_object()) return error("", "expected a JSON object at top level, got " + describe(root));
    for (const auto& [key, value] : root.items()) {
      if (key == "plugin_dirs") {
        if (trust_ == Config::Source::kUntrusted)
          return error(key, "not allowed in an untrusted config: plugins run with the full rights of the process");
        LOOM_RETURN_IF_ERROR(read_string_list(key, value, config.plugin_dirs));
      } else if (key == "providers") {
        LOOM_RETURN_IF_ERROR(read_string_list(key, value, config.providers));
      } else if (key == "provider_options") {
        LOOM_RETURN_IF_ERROR(read_provider_options(key, value, config.provider_options));
      } else if (key == "fallback") {
        LOOM_ASSIGN_OR_RETURN(int i, read_enum(key, value, kFallbackNames));
        config.fallback = static_cast<FallbackPolicy>(i);
      } else if (key == "optimization_level") {
        LOOM_ASSIGN_OR_RETURN(int i, read_enum(key, value, kOptimizationNames));
        config.optimization_level = static_cast<OptimizationLevel>(i);
      } else if (key == "disabled_passes") {
        LOOM_RETURN_IF_ERROR(read_string_list(key, value, config.disabled_passes));
      } else if (key == "stop_after_pass") {
        if (!value.is_number_integer() || value.get<int64_t>() < -1 || value.get<int64_t>() > 1000000)
          return error(key, "expected an integer >= -1, got " + describe(value));
        config.stop_after_pass = value.get<int>();
      } else if (key == "execution_mode") {
        LOOM_ASSIGN_OR_RETURN(int i, read_enum(key, value, kExecutionModes));
        config.execution_mode = static_cast<ExecutionMode>(i);
      } else if (key == "precision") {
        LOOM_ASSIGN_OR_RETURN(int i, read_enum(key, value, kPrecisionNames));
        config.precision = static_cast<Precision>(i);
      } else if (key == "threads") {
        LOOM_RETURN_IF_ERROR(read_threads(key, value, config));
      } else if (key == "memory") {
        LOOM_RETURN_IF_ERROR(read_memory(key, value, config));
      } else if (key == "profiling") {
        LOOM_RETURN_IF_ERROR(read_profiling(key, value, config));
      } else if (key == "limits") {
        LOOM_RETURN_IF_ERROR(read_limits(key, value, config));
      } else if (key == "log_level") {
        LOOM_ASSIGN_OR_RETURN(int i, read_enum(key, value, kLogLevels));
        config.log_level = kLogLevels[i];
      } else {
        return unknown_key(key);
      }
    }
    return Status::ok();
  }

 private:
  Status error(const std::string& path, const std::string& what) const {
    return invalid_argument(source_ + ": " + (path.empty() ? "" : path + ": ") + what);
  }
  Status unknown_key(const std::string& path) const {
    return invalid_argument(source_ + ": unknown key '" + path + "'");
  }

  Status read_string_list(const std::string& path, const Json& v, std::vector<std::string>& out) const {
    if (!v.is_array()) return error(path, "expected an array of strings, got " + describe(v));
    std::vector<std::string> result;
    for (size_t i = 0; i < v.size(); ++i) {
      const std::string item_path = path + "[" + std::to_string(i) + "]";
      if (!v[i].is_string()) return error(item_path, "expected a string, got " + describe(v[i]));
      if (v[i].get_ref<const std::string&>().empty()) return error(item_path, "expected a non-empty string");
      result.push_back(v[i].get<std::string>());
    }
    out = std::move(result);
    return Status::ok();
  }

  template <size_t N>
  Expected<int> read_enum(const std::string& path, const Json& v, const char* const (&names)[N]) const {
    if (v.is_string()) {
      int i = index_of(names, v.get<std::string>());
      if (i >= 0) return i;
    }
    return error(path, "expected one of " + one_of(names) + ", got " + describe(v));
  }

  Status read_provider_options(const std::string& path, const Json& v,
                               std::map<std::string, std::map<std::string, std::string>>& out) const {
    if (!v.is_object()) return error(path, "expected an object mapping provider names to options, got " + describe(v));
    std::map<std::string, std::map<std::string, std::string>> result;
    for (const auto& [provider, options] : v.items()) {
      const std::string provider_path = path + "." + provider;
      if (!options.is_object())
        return error(provider_path, "expected an object of string options, got " + describe(options));
      auto& dest = result[provider];
      for (const auto& [key, value] : options.items()) {
        if (!value.is_string())
          return error(provider_path + "." + key, "expected a string, got " + describe(value));
        dest[key] = value.get<std::string>();
      }
    }
    out = std::move(result);
    return Status::ok();
  }

  Expected<int> read_non_negative_int(const std::string& path, const Json& v) const {
    // Booleans and floats are rejected even when they would convert cleanly:
    // "2.0" threads is more likely a mistake than an intent.
    if (v.is_number_unsigned() && v.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int>::max()))
      return static_cast<int>(v.get<uint64_t>());
    if (v.is_number_integer() && !v.is_number_unsigned() && v.get<int64_t>() >= 0 &&
        v.get<int64_t>() <= std::numeric_limits<int>::max())
      return static_cast<int>(v.get<int64_t>());
    return error(path, "expected a non-negative integer, got " + describe(v));
  }

  Expected<int> read_thread_count(const std::string& path, const Json& v) const {
    LOOM_ASSIGN_OR_RETURN(int n, read_non_negative_int(path, v));
    if (n > kMaxThreads)
      return error(path, "expected at most " + std::to_string(kMaxThreads) + " threads, got " + std::to_string(n));
    return n;
  }

  Status read_threads(const std::string& path, const Json& v, Config& config) const {
    if (!v.is_object()) return error(path, "expected an object with \"intra_op\" and/or \"inter_op\", got " + describe(v));
    for (const auto& [key, value] : v.items()) {
      const std::string key_path = path + "." + key;
      if (key == "intra_op") {
        LOOM_ASSIGN_OR_RETURN(config.intra_op_threads, read_thread_count(key_path, value));
      } else if (key == "inter_op") {
        LOOM_ASSIGN_OR_RETURN(config.inter_op_threads, read_thread_count(key_path, value));
      } else if (key == "spin_us") {
        LOOM_ASSIGN_OR_RETURN(config.spin_us, read_non_negative_int(key_path, value));
      } else if (key == "shared_inter_op") {
        if (!value.is_boolean()) return error(key_path, "expected true or false, got " + describe(value));
        config.shared_inter_op = value.get<bool>();
      } else {
        return unknown_key(key_path);
      }
    }
    return Status::ok();
  }

  Status read_memory(const std::string& path, const Json& v, Config& config) const {
    if (!v.is_object()) return error(path, "expected an object, got " + describe(v));
    for (const auto& [key, value] : v.items()) {
      const std::string key_path = path + "." + key;
      if (key == "arena_limit_mb") {
        if (!value.is_object())
          return error(key_path, "expected an object mapping memory kinds to MiB, got " + describe(value));
        std::map<std::string, int64_t> limits;
        for (const auto& [memory, mb] : value.items()) {
          LOOM_ASSIGN_OR_RETURN(int n, read_non_negative_int(key_path + "." + memory, mb));
          limits[memory] = n;
        }
        config.arena_limit_mb = std::move(limits);
      } else if (key == "arena_growth") {
        LOOM_ASSIGN_OR_RETURN(int i, read_enum(key_path, value, kArenaGrowths));
        config.arena_growth = static_cast<ArenaGrowth>(i);
      } else if (key == "shrink_after_run") {
        if (!value.is_boolean()) return error(key_path, "expected true or false, got " + describe(value));
        config.shrink_arenas_after_run = value.get<bool>();
      } else {
        return unknown_key(key_path);
      }
    }
    return Status::ok();
  }

  Status read_limits(const std::string& path, const Json& v, Config& config) const {
    if (!v.is_object()) return error(path, "expected an object, got " + describe(v));
    for (const auto& [key, value] : v.items()) {
      const std::string key_path = path + "." + key;
      int64_t* field = key == "max_model_mb"     ? &config.max_model_mb
                       : key == "max_nodes"      ? &config.max_nodes
                       : key == "max_tensor_mb"  ? &config.max_tensor_mb
                       : key == "run_timeout_ms" ? &config.run_timeout_ms
                                                 : nullptr;
      if (field == nullptr) return unknown_key(key_path);
      LOOM_ASSIGN_OR_RETURN(int n, read_non_negative_int(key_path, value));
      *field = n;
    }
    return Status::ok();
  }

  Status read_profiling(const std::string& path, const Json& v, Config& config) const {
    if (!v.is_object()) return error(path, "expected an object, got " + describe(v));
    for (const auto& [key, value] : v.items()) {
      const std::string key_path = path + "." + key;
      if (key == "enabled") {
        if (!value.is_boolean()) return error(key_path, "expected true or false, got " + describe(value));
        config.profiling_enabled = value.get<bool>();
      } else if (key == "path") {
        if (!value.is_string() || value.get_ref<const std::string&>().empty())
          return error(key_path, "expected a non-empty string, got " + describe(value));
        config.profiling_path = value.get<std::string>();
      } else {
        return unknown_key(key_path);
      }
    }
    return Status::ok();
  }

  std::string source_;
  Config::Source trust_;
};

// nlohmann's messages start with "[json.exception.parse_error.101] "; the
// rest ("parse error at line 3, column 5: ...") is what a user needs.
std::string strip_json_exception_prefix(const std::string& what) {
  if (!what.empty() && what[0] == '[') {
    auto close = what.find("] ");
    if (close != std::string::npos) return what.substr(close + 2);
  }
  return what;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep)) parts.push_back(cur);
  return parts;
}

std::string trim(const std::string& s) {
  const char* ws = " \t\r\n";
  auto b = s.find_first_not_of(ws);
  if (b == std::string::npos) return "";
  auto e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

}  // namespace

Expected<Config> Config::from_json_string(const std::string& json, const std::string& source_name, Source source) {
  if (json.size() > kMaxConfigBytes)
    return invalid_argument(source_name + ": config is " + std::to_string(json.size()) + " bytes, more than " +
                            std::to_string(kMaxConfigBytes >> 20) + " MiB");
  if (const int64_t at = first_too_deep(json, kMaxNesting); at >= 0)
    return invalid_argument(source_name + ": invalid config: values nest deeper than " + std::to_string(kMaxNesting) +
                            " levels (at byte " + std::to_string(at) + ")");
  Json root;
  try {
    root = Json::parse(json);
  } catch (const Json::parse_error& e) {
    return invalid_argument(source_name + ": invalid JSON: " + strip_json_exception_prefix(e.what()));
  } catch (const std::exception& e) {
    return invalid_argument(source_name + ": invalid JSON: " + strip_json_exception_prefix(e.what()));
  }
  Config config;
  LOOM_RETURN_IF_ERROR(ConfigReader(source_name, source).read(root, config));
  return config;
}

Expected<Config> Config::from_json_file(const std::string& path, Source source) {
  // Only a regular file of bounded size: a FIFO would block and /dev/zero
  // never ends.
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) return not_found(path + ": cannot open config file");
  if (!std::filesystem::is_regular_file(status)) return invalid_argument(path + ": config is not a regular file");
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return fail(path + ": cannot read config file: " + ec.message());
  if (size > kMaxConfigBytes)
    return invalid_argument(path + ": config is " + std::to_string(size) + " bytes, more than " +
                            std::to_string(kMaxConfigBytes >> 20) + " MiB");
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found(path + ": cannot open config file");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return fail(path + ": cannot read config file");
  return from_json_string(buffer.str(), path, source);
}

Status Config::apply_environment() {
  // Dirs from LOOM_PLUGIN_PATH go first so that they are scanned before the
  // config's; a dir already listed moves to the front instead of repeating.
  if (const char* env = std::getenv("LOOM_PLUGIN_PATH")) {
    std::vector<std::string> dirs;
    for (const std::string& d : split(env, ':'))
      if (!d.empty()) dirs.push_back(d);
    for (const std::string& d : plugin_dirs)
      if (std::find(dirs.begin(), dirs.end(), d) == dirs.end()) dirs.push_back(d);
    plugin_dirs = std::move(dirs);
  }
  if (const char* env = std::getenv("LOOM_PROVIDERS")) {
    // An empty value restores the default (every available provider).
    std::vector<std::string> list;
    const auto parts = split(env, ',');
    for (size_t i = 0; i < parts.size(); ++i) {
      std::string name = trim(parts[i]);
      if (name.empty()) {
        if (parts.size() == 1) break;
        return invalid_argument("LOOM_PROVIDERS: empty provider name at position " + std::to_string(i + 1) + " in '" +
                                std::string(env) + "'");
      }
      list.push_back(std::move(name));
    }
    providers = std::move(list);
  }
  if (const char* env = std::getenv("LOOM_LOG_LEVEL")) {
    const std::string level = trim(env);
    if (index_of(kLogLevels, level) < 0)
      return invalid_argument("LOOM_LOG_LEVEL: expected one of " + one_of(kLogLevels) + ", got '" +
                              std::string(env) + "'");
    log_level = level;
  }
  return Status::ok();
}

std::string Config::to_json() const {
  nlohmann::ordered_json j;
  j["plugin_dirs"] = plugin_dirs;
  j["providers"] = providers;
  j["provider_options"] = nlohmann::ordered_json::object();
  for (const auto& [provider, options] : provider_options) {
    auto& dest = j["provider_options"][provider];
    dest = nlohmann::ordered_json::object();
    for (const auto& [key, value] : options) dest[key] = value;
  }
  j["fallback"] = fallback_policy_name(fallback);
  j["optimization_level"] = optimization_level_name(optimization_level);
  j["disabled_passes"] = disabled_passes;
  j["stop_after_pass"] = stop_after_pass;
  j["execution_mode"] = execution_mode_name(execution_mode);
  j["precision"] = precision_name(precision);
  j["threads"] = {{"intra_op", intra_op_threads},
                  {"inter_op", inter_op_threads},
                  {"spin_us", spin_us},
                  {"shared_inter_op", shared_inter_op}};
  j["memory"] = {{"arena_limit_mb", arena_limit_mb},
                 {"arena_growth", kArenaGrowths[static_cast<int>(arena_growth)]},
                 {"shrink_after_run", shrink_arenas_after_run}};
  j["profiling"] = {{"enabled", profiling_enabled}, {"path", profiling_path}};
  j["limits"] = {{"max_model_mb", max_model_mb},
                 {"max_nodes", max_nodes},
                 {"max_tensor_mb", max_tensor_mb},
                 {"run_timeout_ms", run_timeout_ms}};
  j["log_level"] = log_level;
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string fallback_policy_name(FallbackPolicy p) {
  const int i = static_cast<int>(p);
  if (i >= 0 && i < static_cast<int>(std::size(kFallbackNames))) return kFallbackNames[i];
  return "unknown(" + std::to_string(i) + ")";
}

std::string execution_mode_name(ExecutionMode m) {
  const int i = static_cast<int>(m);
  if (i >= 0 && i < static_cast<int>(std::size(kExecutionModes))) return kExecutionModes[i];
  return "unknown(" + std::to_string(i) + ")";
}

std::string precision_name(Precision p) {
  const int i = static_cast<int>(p);
  if (i >= 0 && i < static_cast<int>(std::size(kPrecisionNames))) return kPrecisionNames[i];
  return "unknown(" + std::to_string(i) + ")";
}

std::string optimization_level_name(OptimizationLevel l) {
  const int i = static_cast<int>(l);
  if (i >= 0 && i < static_cast<int>(std::size(kOptimizationNames))) return kOptimizationNames[i];
  return "unknown(" + std::to_string(i) + ")";
}

}  // namespace loom
