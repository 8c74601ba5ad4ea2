#include "ep_options.h"

#include <omp.h>

#include <string>

#include "common/option_values.h"

namespace loom::onednn {
namespace {

constexpr char kProvider[] = "cpu_onednn";

[[noreturn]] void bad_option(const std::string& key, const std::string& value, const char* expected) {
  plugin_options::bad_option(kProvider, key, value, expected);
}
int parse_threads(const std::string& key, const std::string& value) {
  return plugin_options::parse_threads(kProvider, key, value);
}
int parse_count(const std::string& key, const std::string& value) {
  return plugin_options::parse_non_negative(kProvider, key, value);
}
bool parse_bool(const std::string& key, const std::string& value) {
  return plugin_options::parse_bool(kProvider, key, value);
}

}  // namespace

EpOptions parse_ep_options(const sdk::Options& options) {
  EpOptions parsed;
  int threads = 0;
  for (const auto& [key, value] : options) {
    if (key == "intra_op_threads") {
      threads = parse_threads(key, value);
    } else if (key == "winograd") {
      parsed.winograd = parse_bool(key, value);
    } else if (key == "program_cache_size") {
      const int n = parse_count(key, value);
      if (n < 1) bad_option(key, value, "a positive integer");
      parsed.program_cache_size = static_cast<size_t>(n);
    } else {
      throw sdk::Error("cpu_onednn: unknown option '" + key + "' (known: intra_op_threads, winograd, program_cache_size)",
                       LOOM_STATUS_INVALID_ARGUMENT);
    }
  }
  parsed.threads = threads > 0 ? threads : omp_get_num_procs();
  return parsed;
}

}  // namespace loom::onednn
