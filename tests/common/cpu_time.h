// CPU time of the whole process (every thread, user and system), for tests
// that check an idle runtime costs no CPU.
#pragma once

#include <time.h>

namespace loom::testing {

inline double process_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

}  // namespace loom::testing
