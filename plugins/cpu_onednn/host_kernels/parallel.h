// Splitting a host step's work across the EP's threads (OpenMP teams, the
// runtime oneDNN's own steps use, so the two never oversubscribe).
#pragma once

#include <algorithm>
#include <cstdint>

namespace loom::onednn {

// Calls fn(begin, end) for contiguous, in-order ranges covering [0, count):
// one range per OpenMP team, min(threads, count) teams, at least one.
template <class Fn>
void for_each_thread_range(int threads, int64_t count, const Fn& fn) {
  const int teams = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(threads, count)));
#pragma omp parallel for num_threads(teams) schedule(static)
  for (int t = 0; t < teams; ++t) fn(count * t / teams, count * (t + 1) / teams);
}

}  // namespace loom::onednn
