// Calls into Loom that may take long (session creation, runs, copies) run
// without the GIL so other Python threads go on meanwhile; their result is
// turned into a Python value or exception after the GIL is back.
#pragma once

#include <pybind11/pybind11.h>

#include <utility>

namespace loom::python {

template <class F>
auto without_gil(F&& f) {
  pybind11::gil_scoped_release release;
  return std::forward<F>(f)();
}

}  // namespace loom::python
