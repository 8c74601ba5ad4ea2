// Resident set size of this test process, for tests that check memory stays
// flat (no leak) or does not jump (no allocation a hostile input asked for).
#pragma once

#include <unistd.h>

#include <cstdint>
#include <fstream>

namespace loom::testing {

// Under AddressSanitizer freed memory waits in a quarantine (up to 256 MiB)
// before reuse, so RSS grows by design over many allocations; LeakSanitizer
// checks for leaks at exit instead. Tests of flat RSS over long runs skip
// that check when this is true.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

inline int64_t rss_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

}  // namespace loom::testing
