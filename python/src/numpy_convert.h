// Model values between numpy and Loom: numpy arrays (every ONNX numeric
// type, bool, and str / bytes / object arrays for strings) to and from
// loom::Tensor, Python lists to and from sequences, None for an empty
// optional. Every function here needs the GIL.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>

#include "loom/session.h"

namespace loom::python {

// The numpy dtype of `dtype`; raises loom.NotImplemented when numpy has
// none. bfloat16 is ml_dtypes.bfloat16 when that package is installed, else
// float32: outputs come back widened to float32 (exact, as onnx.numpy_helper
// reads bfloat16), and float arrays fed to bfloat16 inputs are rounded to
// nearest even.
pybind11::dtype numpy_dtype(DType dtype);
// The Loom dtype of a numpy dtype; kString for str, bytes and object;
// kUndefined when there is none (datetime, structured, float128).
DType loom_dtype(const pybind11::dtype& dtype);
// ONNX Runtime's type string: "tensor(float)", "seq(tensor(int64))", ...
// ONNX Runtime's type string of a value (key_dtype: maps' keys).
std::string type_string(ValueKind kind, DType dtype, DType key_dtype = DType::kUndefined);

// `obj` as a tensor for the value `name` (for error messages). An object
// that is not a numpy array is converted with numpy.asarray, with `expected`
// as its dtype when that is known. Copies the data.
Tensor to_tensor(pybind11::handle obj, const std::string& name, DType expected);
// `obj` as the model value described by `info` (NULL when unknown): None is
// an empty optional, a list or tuple for a sequence input a sequence.
Value to_value(pybind11::handle obj, const std::string& name, const ValueInfo* info);

// A numpy array sharing the tensor's storage (object array of str for
// strings).
pybind11::object to_numpy(Tensor tensor);
// An array, a list of arrays (sequence) or None (empty optional).
pybind11::object to_python(Value value);

}  // namespace loom::python
