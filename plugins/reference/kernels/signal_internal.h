// Internal interface of the reference EP's signal-processing family
// (kernels/signal*.cpp): sub-registrations called from
// register_signal_kernels (signal.cpp) and helpers shared by its files.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "common/dispatch.h"
#include "common/elementwise_helpers.h"
#include "loom/sdk.h"

namespace loom::reference {

// BlackmanWindow, HammingWindow, HannWindow, MelWeightMatrix (signal_window.cpp).
void register_signal_window_kernels(sdk::KernelRegistry& r);

// Converts a value computed in double to element type T: 16-bit floats via
// float, integers by truncation toward zero without undefined behaviour
// (NaN and out-of-range values as Cast does on x86).
template <class T>
T signal_from_double(double v) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>)
    return T(static_cast<float>(v));
  else if constexpr (std::is_integral_v<T>)
    return float_to_int<T>(v);
  else
    return static_cast<T>(v);
}

// Reads a scalar (one-element) integer input; throws naming the op and input.
inline int64_t signal_scalar_int(const sdk::ConstTensor& t, std::string_view op, std::string_view name) {
  if (t.dtype() != LOOM_DTYPE_INT32 && t.dtype() != LOOM_DTYPE_INT64)
    throw sdk::Error(std::string(op) + ": input '" + std::string(name) + "' must be int32 or int64, got " +
                         sdk::dtype_name(t.dtype()),
                     LOOM_STATUS_INVALID_ARGUMENT);
  if (t.size() != 1)
    throw sdk::Error(std::string(op) + ": input '" + std::string(name) + "' must be a scalar, got " +
                         std::to_string(t.size()) + " elements",
                     LOOM_STATUS_INVALID_ARGUMENT);
  return t.to_int64_vector()[0];
}

}  // namespace loom::reference
