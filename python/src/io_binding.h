// loom.SessionIOBinding (InferenceSession.io_binding()) and loom.OrtValue:
// ONNX Runtime's IO binding over loom::IoBinding. Inputs bound from numpy
// (bind_cpu_input) or from a buffer in some memory kind (bind_input with
// device_type and buffer_ptr, or an OrtValue a previous run left on the
// device); outputs into a given buffer or left in a memory kind, read back
// with copy_outputs_to_cpu() or kept as OrtValues (get_outputs()).
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <string>
#include <vector>

#include "loom/session.h"

namespace loom::python {

class PyInferenceSession;

// A tensor in some memory kind, owned by the session's EP (an output left
// on the device) or viewing memory the caller owns.
struct PyOrtValue {
  std::shared_ptr<const Session> session;  // the buffer must not outlive it
  std::shared_ptr<DeviceBuffer> buffer;    // when owned
  DeviceTensor tensor;
  Tensor host;  // when bound from numpy: keeps the data alive
};

class PyIoBinding {
 public:
  explicit PyIoBinding(std::shared_ptr<PyInferenceSession> session);

  void bind_cpu_input(const std::string& name, const pybind11::object& array);
  void bind_input(const std::string& name, const std::string& device_type, int device_id,
                  const pybind11::object& element_type, const std::vector<int64_t>& shape, uintptr_t buffer_ptr);
  void bind_ortvalue_input(const std::string& name, const PyOrtValue& value);
  void bind_output(const std::string& name, const std::string& device_type, int device_id,
                   const pybind11::object& element_type, const pybind11::object& shape,
                   const pybind11::object& buffer_ptr);
  void clear_binding_inputs() { inputs_.clear(); }
  void clear_binding_outputs() { outputs_.clear(); }

  // Runs the session on the bindings (without the GIL).
  void run(const RunOptions& options);
  pybind11::list copy_outputs_to_cpu() const;
  std::vector<PyOrtValue> get_outputs() const;

 private:
  struct Input {
    std::string name;
    PyOrtValue value;
  };
  struct Output {
    std::string name;
    std::string memory;    // where it is left when not preallocated
    DeviceTensor target;   // preallocated
    bool preallocated = false;
    PyOrtValue result;     // after a run
  };
  std::shared_ptr<PyInferenceSession> session_;
  std::vector<Input> inputs_;
  std::vector<Output> outputs_;
};

void run_with_iobinding(const PyInferenceSession& session, PyIoBinding& binding, const pybind11::object& run_options);

void register_io_binding(pybind11::module_& m);

}  // namespace loom::python
