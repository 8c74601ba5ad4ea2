// Loom plugin SDK (header-only, C++17): access to the host table and
// conversion between C++ exceptions and ABI statuses.
#pragma once

#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>

#include "loom/plugin_api.h"

namespace loom::sdk {

// The host table of the plugin this SDK copy is compiled into. Set once by the
// entry point (LOOM_SDK_DEFINE_PLUGIN) before any other slot runs.
inline const LOOM_HostApi*& host_slot() {
  static const LOOM_HostApi* host = nullptr;
  return host;
}
inline const LOOM_HostApi& host() { return *host_slot(); }

// The ABI minor the host and this plugin agreed on at init: min(host minor,
// the minor of the headers the plugin was built with). Fields and slots
// added after it must not be used (LOOM_HAS_FIELD checks the host's tables).
inline uint32_t& agreed_abi_minor_slot() {
  static uint32_t minor = 0;
  return minor;
}
inline uint32_t agreed_abi_minor() { return agreed_abi_minor_slot(); }

inline LOOM_StringView to_view(std::string_view s) { return {s.data(), s.size()}; }
inline std::string_view from_view(LOOM_StringView s) {
  return s.size == 0 ? std::string_view() : std::string_view(s.data, s.size);
}

// Thrown by SDK users to fail a call with a specific status code.
class Error : public std::runtime_error {
 public:
  explicit Error(std::string message, int32_t code = LOOM_STATUS_FAIL)
      : std::runtime_error(std::move(message)), code_(code) {}
  int32_t code() const noexcept { return code_; }

 private:
  int32_t code_;
};

// Shorthand for argument errors (bad attribute, shape, dtype).
[[noreturn]] inline void fail_invalid(const std::string& message) {
  throw Error(message, LOOM_STATUS_INVALID_ARGUMENT);
}
#define LOOM_SDK_ENFORCE(cond, message)                                   \
  do {                                                                    \
    if (!(cond)) ::loom::sdk::fail_invalid(std::string(message));         \
  } while (0)

inline LOOM_Status* make_status(int32_t code, std::string_view message) {
  return host().status_create(code, to_view(message));
}

// Runs `fn` and converts any exception into a host status (NULL = OK).
template <class Fn>
LOOM_Status* guarded(Fn&& fn) noexcept {
  try {
    fn();
    return nullptr;
  } catch (const Error& e) {
    return make_status(e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return make_status(LOOM_STATUS_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return make_status(LOOM_STATUS_FAIL, e.what());
  } catch (...) {
    return make_status(LOOM_STATUS_FAIL, "unknown exception in plugin");
  }
}

// Throws if a host call returned an error status (taking ownership of it).
inline void throw_if_error(LOOM_Status* status) {
  if (status == nullptr) return;
  const int32_t code = host().status_code(status);
  std::string message(from_view(host().status_message(status)));
  host().status_release(status);
  throw Error(std::move(message), code);
}

inline void log(int32_t level, std::string_view source, std::string_view message) {
  if (host_slot() != nullptr && level >= host().log_level())
    host().log(level, to_view(source), to_view(message));
}

}  // namespace loom::sdk
