// Element-type dispatch for reference kernels: calls a generic lambda with a
// value of the C++ type matching a runtime LOOM_DTYPE_* code.
//
//   dispatch<NumericTypes>(t.dtype(), "Add", [&](auto tag) {
//     using T = decltype(tag);
//     ...
//   });
#pragma once

#include <string>
#include <string_view>
#include <type_traits>

#include "loom/sdk.h"

namespace loom::reference {

using sdk::BFloat16;
using sdk::Float16;

template <class... Ts>
struct TypeList {};

using FloatTypes = TypeList<float, double, Float16, BFloat16>;
using SignedIntTypes = TypeList<int8_t, int16_t, int32_t, int64_t>;
using UnsignedIntTypes = TypeList<uint8_t, uint16_t, uint32_t, uint64_t>;
using IntTypes = TypeList<int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>;
using NumericTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t,
                              uint8_t, uint16_t, uint32_t, uint64_t>;
using SignedNumericTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t>;
// Every fixed-size type (numeric and bool); no strings.
using PodTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t,
                          uint8_t, uint16_t, uint32_t, uint64_t, bool>;

[[noreturn]] inline void unsupported_type(std::string_view what, int32_t dtype) {
  throw sdk::Error(std::string(what) + ": element type " + sdk::dtype_name(dtype) +
                       " is not supported",
                   LOOM_STATUS_NOT_IMPLEMENTED);
}

template <class List>
struct Dispatcher;
template <class... Ts>
struct Dispatcher<TypeList<Ts...>> {
  template <class F>
  static void run(int32_t dtype, std::string_view what, F&& f) {
    const bool done = ((sdk::DTypeOf<Ts>::value == dtype ? (f(Ts{}), true) : false) || ...);
    if (!done) unsupported_type(what, dtype);
  }
};

template <class List, class F>
void dispatch(int32_t dtype, std::string_view what, F&& f) {
  Dispatcher<List>::run(dtype, what, std::forward<F>(f));
}

// Arithmetic type used to compute on T: float for the 16-bit floats.
template <class T>
using compute_t = std::conditional_t<std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>, float, T>;

template <class T>
constexpr bool is_float_v = std::is_floating_point_v<T> || std::is_same_v<T, Float16> ||
                            std::is_same_v<T, BFloat16>;

}  // namespace loom::reference
