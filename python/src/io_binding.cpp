#include "io_binding.h"

#include <pybind11/stl.h>

#include "errors.h"
#include "gil.h"
#include "inference_session.h"
#include "numpy_convert.h"

namespace loom::python {

namespace py = pybind11;

namespace {

void check_device_id(int device_id) {
  if (device_id != 0)
    throw_invalid_argument("device_id " + std::to_string(device_id) + ": a Loom session uses device 0 of each provider");
}

PyOrtValue host_value(Tensor t) {
  PyOrtValue v;
  v.tensor = DeviceTensor{t.dtype(), t.dims(), t.mutable_data(), "cpu"};
  v.host = std::move(t);
  return v;
}

bool is_host(const PyOrtValue& v) { return v.host.dtype() != DType::kUndefined; }

py::object to_numpy_copy(const PyOrtValue& v) {
  if (is_host(v)) return to_numpy(v.host);
  if (!v.session || v.tensor.dtype == DType::kUndefined)
    throw_invalid_argument("the OrtValue holds no tensor");
  return to_numpy(value_or_throw(without_gil([&] { return v.session->copy_to_host(v.tensor); })));
}

}  // namespace

PyIoBinding::PyIoBinding(std::shared_ptr<PyInferenceSession> session) : session_(std::move(session)) {}

void PyIoBinding::bind_cpu_input(const std::string& name, const py::object& array) {
  const ValueInfo* info = session_->input_info(name);
  PyOrtValue v = host_value(to_tensor(array, name, info != nullptr ? info->dtype : DType::kUndefined));
  bind_ortvalue_input(name, v);
}

void PyIoBinding::bind_input(const std::string& name, const std::string& device_type, int device_id,
                             const py::object& element_type, const std::vector<int64_t>& shape, uintptr_t buffer_ptr) {
  check_device_id(device_id);
  const DType dtype = loom_dtype(py::dtype::from_args(element_type));
  if (dtype == DType::kUndefined || dtype == DType::kString)
    throw_invalid_argument("input '" + name + "': element_type has no ONNX numeric type");
  PyOrtValue v;
  v.session = session_->shared_session();
  v.tensor = DeviceTensor{dtype, shape, reinterpret_cast<void*>(buffer_ptr), device_type};
  bind_ortvalue_input(name, v);
}

void PyIoBinding::bind_ortvalue_input(const std::string& name, const PyOrtValue& value) {
  for (Input& in : inputs_)
    if (in.name == name) {
      in.value = value;
      return;
    }
  inputs_.push_back({name, value});
}

void PyIoBinding::bind_output(const std::string& name, const std::string& device_type, int device_id,
                              const py::object& element_type, const py::object& shape, const py::object& buffer_ptr) {
  check_device_id(device_id);
  Output out;
  out.name = name;
  out.memory = device_type;
  if (!buffer_ptr.is_none()) {
    if (element_type.is_none() || shape.is_none())
      throw_invalid_argument("output '" + name + "': a buffer_ptr needs element_type and shape");
    const DType dtype = loom_dtype(py::dtype::from_args(element_type));
    if (dtype == DType::kUndefined || dtype == DType::kString)
      throw_invalid_argument("output '" + name + "': element_type has no ONNX numeric type");
    out.preallocated = true;
    out.target = DeviceTensor{dtype, shape.cast<Dims>(), reinterpret_cast<void*>(buffer_ptr.cast<uintptr_t>()),
                              device_type};
  }
  for (Output& o : outputs_)
    if (o.name == name) {
      o = std::move(out);
      return;
    }
  outputs_.push_back(std::move(out));
}

void PyIoBinding::run(const RunOptions& options) {
  IoBinding io;
  for (const Input& in : inputs_) {
    if (is_host(in.value)) io.bind_input(in.name, in.value.host);
    else io.bind_input(in.name, in.value.tensor);
  }
  for (const Output& out : outputs_) {
    if (out.preallocated) io.bind_output(out.name, out.target);
    else io.bind_output_to_memory(out.name, out.memory);
  }
  const Session& session = session_->session();
  check(without_gil([&] { return session.run(io, options); }));
  for (Output& out : outputs_) {
    out.result = PyOrtValue{};
    out.result.session = session_->shared_session();
    if (out.preallocated) {
      out.result.tensor = out.target;
    } else {
      out.result.buffer = io.output(out.name);
      if (out.result.buffer) out.result.tensor = out.result.buffer->tensor();
    }
  }
}

py::list PyIoBinding::copy_outputs_to_cpu() const {
  py::list out;
  for (const Output& o : outputs_) {
    if (!o.result.session) throw_invalid_argument("output '" + o.name + "': run_with_iobinding has not run yet");
    out.append(to_numpy_copy(o.result));
  }
  return out;
}

std::vector<PyOrtValue> PyIoBinding::get_outputs() const {
  std::vector<PyOrtValue> out;
  for (const Output& o : outputs_) out.push_back(o.result);
  return out;
}

void run_with_iobinding(const PyInferenceSession& session, PyIoBinding& binding, const py::object& run_options) {
  (void)session;  // the binding runs the session it was made by
  binding.run(run_options_of(run_options));
}

void register_io_binding(py::module_& m) {
  py::class_<PyOrtValue>(m, "OrtValue", "A tensor in some memory kind ('cpu' or a provider's device memory).")
      .def_static(
          "ortvalue_from_numpy",
          [](const py::object& array, const std::string& device_type, int device_id) {
            check_device_id(device_id);
            if (device_type != "cpu")
              throw_status(not_implemented("ortvalue_from_numpy: only 'cpu'; bind device inputs with "
                                           "SessionIOBinding.bind_input"));
            return host_value(to_tensor(array, "array", DType::kUndefined));
          },
          py::arg("array"), py::arg("device_type") = "cpu", py::arg("device_id") = 0)
      .def("data_ptr", [](const PyOrtValue& v) { return reinterpret_cast<uintptr_t>(v.tensor.data); })
      .def("device_name", [](const PyOrtValue& v) { return v.tensor.memory; })
      .def("shape", [](const PyOrtValue& v) { return v.tensor.dims; })
      .def("data_type", [](const PyOrtValue& v) { return type_string(ValueKind::kTensor, v.tensor.dtype); })
      .def("element_type", [](const PyOrtValue& v) { return numpy_dtype(v.tensor.dtype).attr("type"); })
      .def("is_tensor", [](const PyOrtValue&) { return true; })
      .def("has_value", [](const PyOrtValue& v) { return v.tensor.data != nullptr || is_host(v); })
      .def("numpy", &to_numpy_copy, "A copy in host memory as a numpy array.");

  py::class_<PyIoBinding>(m, "SessionIOBinding")
      .def("bind_cpu_input", &PyIoBinding::bind_cpu_input, py::arg("name"), py::arg("arr_on_cpu"))
      .def("bind_input", &PyIoBinding::bind_input, py::arg("name"), py::arg("device_type"), py::arg("device_id"),
           py::arg("element_type"), py::arg("shape"), py::arg("buffer_ptr"))
      .def("bind_ortvalue_input", &PyIoBinding::bind_ortvalue_input, py::arg("name"), py::arg("ortvalue"))
      .def("bind_output", &PyIoBinding::bind_output, py::arg("name"), py::arg("device_type") = "cpu",
           py::arg("device_id") = 0, py::arg("element_type") = py::none(), py::arg("shape") = py::none(),
           py::arg("buffer_ptr") = py::none())
      .def("clear_binding_inputs", &PyIoBinding::clear_binding_inputs)
      .def("clear_binding_outputs", &PyIoBinding::clear_binding_outputs)
      .def("synchronize_inputs", [](PyIoBinding&) {})   // runs are synchronous
      .def("synchronize_outputs", [](PyIoBinding&) {})
      .def("copy_outputs_to_cpu", &PyIoBinding::copy_outputs_to_cpu)
      .def("get_outputs", &PyIoBinding::get_outputs);
}

}  // namespace loom::python
