// Loom plugin SDK: checked arithmetic for sizes computed from a model or an
// input (an output's dims, element counts, byte sizes), so a hostile value
// becomes an INVALID_ARGUMENT error instead of a wrapped size and an
// out-of-bounds write. `what` names the quantity in the message.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "loom/sdk/host.h"

namespace loom::sdk {

inline int64_t checked_mul(int64_t a, int64_t b, const std::string& what) {
  int64_t r = 0;
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &r))
    throw Error(what + ": " + std::to_string(a) + " x " + std::to_string(b) + " is out of range",
                LOOM_STATUS_INVALID_ARGUMENT);
  return r;
}

inline int64_t checked_add(int64_t a, int64_t b, const std::string& what) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r))
    throw Error(what + ": " + std::to_string(a) + " + " + std::to_string(b) + " overflows",
                LOOM_STATUS_INVALID_ARGUMENT);
  return r;
}

inline int64_t checked_sub(int64_t a, int64_t b, const std::string& what) {
  int64_t r = 0;
  if (__builtin_sub_overflow(a, b, &r))
    throw Error(what + ": " + std::to_string(a) + " - " + std::to_string(b) + " overflows",
                LOOM_STATUS_INVALID_ARGUMENT);
  return r;
}

// The element count of `dims`: each dim non-negative, the product in range.
inline int64_t checked_element_count(const std::vector<int64_t>& dims, const std::string& what) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) throw Error(what + ": negative dimension " + std::to_string(d), LOOM_STATUS_INVALID_ARGUMENT);
    n = checked_mul(n, d, what);
  }
  return n;
}

}  // namespace loom::sdk
