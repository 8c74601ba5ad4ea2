// Provider-option values as the shipped EPs read them (config
// `provider_options.<provider>`): each bad value is an INVALID_ARGUMENT
// error naming the provider, the key, what was expected and what came.
#pragma once

#include <stdexcept>
#include <string>

#include "loom/sdk.h"

namespace loom::plugin_options {

[[noreturn]] inline void bad_option(const std::string& provider, const std::string& key, const std::string& value,
                                    const char* expected) {
  throw sdk::Error(provider + ": option " + key + " must be " + expected + ", got '" + value + "'",
                   LOOM_STATUS_INVALID_ARGUMENT);
}

// true / 1 / on or false / 0 / off.
inline bool parse_bool(const std::string& provider, const std::string& key, const std::string& value) {
  if (value == "true" || value == "1" || value == "on") return true;
  if (value == "false" || value == "0" || value == "off") return false;
  bad_option(provider, key, value, "true or false");
}

// A whole non-negative int, nothing after it.
inline int parse_non_negative(const std::string& provider, const std::string& key, const std::string& value) {
  try {
    size_t used = 0;
    const int n = std::stoi(value, &used);
    if (used == value.size() && n >= 0) return n;
  } catch (const std::exception&) {
  }
  bad_option(provider, key, value, "a non-negative integer");
}

// The most threads an option may ask for (a million crash libgomp or hit
// the OS's thread limit rather than fail), as the config's threads keys.
constexpr int kMaxThreads = 1024;

// A thread count: 0 .. kMaxThreads.
inline int parse_threads(const std::string& provider, const std::string& key, const std::string& value) {
  const int n = parse_non_negative(provider, key, value);
  if (n > kMaxThreads) bad_option(provider, key, value, "at most 1024 threads");
  return n;
}

}  // namespace loom::plugin_options
