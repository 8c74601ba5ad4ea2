// The calling thread's OpenMP thread count for one scope: the ICV oneDNN's
// OpenMP build reads when it creates a primitive (which sizes its work for
// that many threads) and when it runs one.
#pragma once

#include <omp.h>

namespace loom::onednn {

class ThreadCount {
 public:
  // `threads` <= 0 leaves the count as it is.
  explicit ThreadCount(int threads) {
    if (threads <= 0) return;
    const int current = omp_get_max_threads();
    if (threads == current) return;
    previous_ = current;
    omp_set_num_threads(threads);
  }
  ~ThreadCount() {
    if (previous_ > 0) omp_set_num_threads(previous_);
  }
  ThreadCount(const ThreadCount&) = delete;
  ThreadCount& operator=(const ThreadCount&) = delete;

 private:
  int previous_ = 0;  // to put back; 0: nothing changed
};

}  // namespace loom::onednn
