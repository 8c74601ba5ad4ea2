// loom._loom: the extension module behind the `loom` Python package.
#include <pybind11/pybind11.h>

#include "environment.h"
#include "errors.h"
#include "inference_session.h"
#include "io_binding.h"
#include "placement.h"
#include "session_options.h"

PYBIND11_MODULE(_loom, m) {
  m.doc() = "Loom: a plugin-based ONNX inference runtime (ONNX Runtime's Python API).";
  m.attr("__version__") = LOOM_VERSION;
  loom::python::register_errors(m);
  loom::python::register_session_options(m);
  loom::python::register_environment(m);
  loom::python::register_placement(m);
  loom::python::register_io_binding(m);
  loom::python::register_inference_session(m);
}
