// Resident set size of this test process, for tests that check memory stays
// flat (no leak) or does not jump (no allocation a hostile input asked for).
#pragma once

#include <unistd.h>

#include <cstdint>
#include <fstream>

namespace loom::testing {

inline int64_t rss_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

}  // namespace loom::testing
