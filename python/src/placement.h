// loom.PlacementReport: which provider runs each node of a session, and why
// (InferenceSession.get_placement(); str() is `loom partition`'s text).
#pragma once

#include <pybind11/pybind11.h>

namespace loom::python {

void register_placement(pybind11::module_& m);

}  // namespace loom::python
