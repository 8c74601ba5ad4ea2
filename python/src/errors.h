// Loom's Status codes as Python exceptions: loom.LoomError (a RuntimeError)
// and one subclass per code (loom.Fail, loom.InvalidArgument, loom.NotFound
// a.k.a. loom.NoSuchFile, ...), raised with the Status message unchanged.
// Every function here needs the GIL.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

#include "loom/status.h"

namespace loom::python {

void register_errors(pybind11::module_& m);

// Raises the exception class of `status.code()` with its message.
[[noreturn]] void throw_status(const Status& status);
[[noreturn]] inline void throw_invalid_argument(const std::string& message) {
  throw_status(invalid_argument(message));
}

inline void check(const Status& status) {
  if (!status.is_ok()) throw_status(status);
}

template <class T>
T value_or_throw(Expected<T>&& e) {
  if (!e.has_value()) throw_status(e.status());
  return std::move(e).value();
}

}  // namespace loom::python
