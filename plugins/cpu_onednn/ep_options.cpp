#include "ep_options.h"

#include <omp.h>

#include <stdexcept>
#include <string>

namespace loom::onednn {
namespace {

[[noreturn]] void bad_option(const std::string& key, const std::string& value, const char* expected) {
  throw sdk::Error("cpu_onednn: option " + key + " must be " + expected + ", got '" + value + "'",
                   LOOM_STATUS_INVALID_ARGUMENT);
}

int parse_threads(const std::string& key, const std::string& value) {
  try {
    size_t used = 0;
    const int n = std::stoi(value, &used);
    if (used == value.size() && n >= 0) return n;
  } catch (const std::exception&) {
  }
  bad_option(key, value, "a non-negative integer");
}

bool parse_bool(const std::string& key, const std::string& value) {
  if (value == "true" || value == "1" || value == "on") return true;
  if (value == "false" || value == "0" || value == "off") return false;
  bad_option(key, value, "true or false");
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
      const int n = parse_threads(key, value);
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
