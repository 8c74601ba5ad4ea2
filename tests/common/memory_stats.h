// The memory statistics of one memory kind ("cpu", a device's), from
// Session::memory_stats().
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "loom/session.h"

namespace loom::testing {

// A copy: memory_stats() returns a new vector on every call, so a pointer
// into a temporary one would dangle.
inline std::optional<MemoryStats> stats_of(const std::vector<MemoryStats>& all, const std::string& memory) {
  for (const MemoryStats& s : all)
    if (s.memory == memory) return s;
  return std::nullopt;
}

}  // namespace loom::testing
