#include "errors.h"

#include <array>

namespace loom::python {

namespace py = pybind11;

namespace {

// Indexed by StatusCode; [0] is the base class. Module attributes keep
// them alive for the life of the interpreter.
std::array<PyObject*, 9> g_classes{};

struct ErrorClass {
  StatusCode code;
  const char* name;
  const char* doc;
};

constexpr ErrorClass kClasses[] = {
    {StatusCode::kFail, "Fail", "A failure that fits no other class (e.g. a kernel that failed)."},
    {StatusCode::kInvalidArgument, "InvalidArgument",
     "A bad argument: an unknown input or output name, a wrong dtype or shape, a bad option."},
    {StatusCode::kNotFound, "NotFound", "Something named was not found: a model file, a plugin directory, a provider."},
    {StatusCode::kNotImplemented, "NotImplemented", "An operator, type or copy nobody implements."},
    {StatusCode::kInvalidGraph, "InvalidGraph", "A model that is not valid ONNX or that Loom cannot load."},
    {StatusCode::kOutOfMemory, "OutOfMemory", "An allocation failed or went over a configured limit."},
    {StatusCode::kCancelled, "Cancelled", "A run stopped by RunOptions.terminate."},
    {StatusCode::kTimedOut, "TimedOut", "A run stopped by the config's limits.run_timeout_ms."},
};

}  // namespace

void register_errors(py::module_& m) {
  PyObject* base = PyErr_NewExceptionWithDoc("loom.LoomError", "Base class of every error Loom raises.",
                                             PyExc_RuntimeError, nullptr);
  if (base == nullptr) throw py::error_already_set();
  g_classes[0] = base;
  m.attr("LoomError") = py::reinterpret_borrow<py::object>(base);
  for (const ErrorClass& c : kClasses) {
    const std::string qualified = std::string("loom.") + c.name;
    // InvalidArgument is also a ValueError, as Python code expects of a bad argument.
    py::object bases = c.code == StatusCode::kInvalidArgument
                           ? py::object(py::make_tuple(py::handle(base), py::handle(PyExc_ValueError)))
                           : py::reinterpret_borrow<py::object>(base);
    PyObject* cls = PyErr_NewExceptionWithDoc(qualified.c_str(), c.doc, bases.ptr(), nullptr);
    if (cls == nullptr) throw py::error_already_set();
    g_classes[static_cast<size_t>(c.code)] = cls;
    m.attr(c.name) = py::reinterpret_borrow<py::object>(cls);
  }
  // ONNX Runtime's name for a missing model file.
  m.attr("NoSuchFile") = m.attr("NotFound");
}

void throw_status(const Status& status) {
  const auto i = static_cast<size_t>(status.code());
  PyObject* cls = i < g_classes.size() && g_classes[i] != nullptr ? g_classes[i] : g_classes[0];
  PyErr_SetString(cls, status.message().c_str());
  throw py::error_already_set();
}

}  // namespace loom::python
