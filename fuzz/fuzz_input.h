// Deterministic choices drawn from the tail of a fuzzer input, so one input
// always replays the same way (a regression file reproduces its finding).
#pragma once

#include <cstddef>
#include <cstdint>

namespace loom::fuzz {

class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  // A value in [0, bound) (0 when bound is 0 or the input is used up).
  uint64_t pick(uint64_t bound) {
    if (bound == 0) return 0;
    uint64_t v = 0;
    for (int i = 0; i < 4 && size_ > 0; ++i) v = (v << 8) | data_[--size_];
    return v % bound;
  }

 private:
  const uint8_t* data_;
  size_t size_;
};

}  // namespace loom::fuzz
