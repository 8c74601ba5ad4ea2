#include "numpy_convert.h"

#include <pybind11/stl.h>

#include "errors.h"

namespace loom::python {

namespace py = pybind11;

namespace {

py::module_ numpy() { return py::module_::import("numpy"); }

const char* numpy_name(DType dtype) {
  switch (dtype) {
    case DType::kFloat: return "float32";
    case DType::kUint8: return "uint8";
    case DType::kInt8: return "int8";
    case DType::kUint16: return "uint16";
    case DType::kInt16: return "int16";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kBool: return "bool";
    case DType::kFloat16: return "float16";
    case DType::kDouble: return "float64";
    case DType::kUint32: return "uint32";
    case DType::kUint64: return "uint64";
    case DType::kComplex64: return "complex64";
    case DType::kComplex128: return "complex128";
    case DType::kString: return "object";
    default: return nullptr;
  }
}

std::string bytes_of(py::handle item) {
  if (PyBytes_Check(item.ptr())) return item.cast<std::string>();
  if (PyUnicode_Check(item.ptr())) {
    Py_ssize_t size = 0;
    const char* utf8 = PyUnicode_AsUTF8AndSize(item.ptr(), &size);
    if (utf8 == nullptr) throw py::error_already_set();
    return std::string(utf8, static_cast<size_t>(size));
  }
  throw py::type_error("");  // replaced by the caller's message
}

Tensor strings_to_tensor(const py::array& arr, const std::string& name, Dims dims) {
  std::vector<std::string> values;
  values.reserve(static_cast<size_t>(arr.size()));
  py::object flat = arr.attr("ravel")();
  size_t i = 0;
  for (py::handle item : flat) {
    try {
      values.push_back(bytes_of(item));
    } catch (const py::type_error&) {
      throw_invalid_argument("input '" + name + "': element " + std::to_string(i) +
                             " of a string tensor is a " + std::string(py::str(item.get_type().attr("__name__"))) +
                             ", not str or bytes");
    }
    ++i;
  }
  return Tensor::from_strings(std::move(dims), std::move(values));
}

}  // namespace

py::dtype numpy_dtype(DType dtype) {
  if (const char* n = numpy_name(dtype)) return py::dtype(n);
  if (dtype == DType::kBFloat16) {
    try {
      return py::dtype::from_args(py::module_::import("ml_dtypes").attr("bfloat16"));
    } catch (const py::error_already_set&) {
      throw_status(not_implemented("bfloat16 has no numpy type without the ml_dtypes package"));
    }
  }
  throw_status(not_implemented("no numpy type for " + dtype_name(dtype)));
}

DType loom_dtype(const py::dtype& d) {
  const size_t size = static_cast<size_t>(d.itemsize());
  switch (d.kind()) {
    case 'f':
      return size == 2 ? DType::kFloat16 : size == 4 ? DType::kFloat : size == 8 ? DType::kDouble : DType::kUndefined;
    case 'i':
      return size == 1 ? DType::kInt8 : size == 2 ? DType::kInt16 : size == 4 ? DType::kInt32
           : size == 8 ? DType::kInt64 : DType::kUndefined;
    case 'u':
      return size == 1 ? DType::kUint8 : size == 2 ? DType::kUint16 : size == 4 ? DType::kUint32
           : size == 8 ? DType::kUint64 : DType::kUndefined;
    case 'b': return DType::kBool;
    case 'c': return size == 8 ? DType::kComplex64 : size == 16 ? DType::kComplex128 : DType::kUndefined;
    case 'U':
    case 'S':
    case 'O': return DType::kString;
    case 'V':
      if (size == 2 && std::string(py::str(d.attr("name"))) == "bfloat16") return DType::kBFloat16;
      return DType::kUndefined;
    default: return DType::kUndefined;
  }
}

std::string type_string(ValueKind kind, DType dtype) {
  const std::string tensor = "tensor(" + (dtype == DType::kUndefined ? std::string("undefined") : dtype_name(dtype)) + ")";
  switch (kind) {
    case ValueKind::kTensor: return tensor;
    case ValueKind::kSequence: return "seq(" + tensor + ")";
    case ValueKind::kOptional: return "optional(" + tensor + ")";
    case ValueKind::kUnknown: break;
  }
  return "unknown";
}

Tensor to_tensor(py::handle obj, const std::string& name, DType expected) {
  py::array arr;
  if (py::isinstance<py::array>(obj)) {
    arr = py::reinterpret_borrow<py::array>(obj);
  } else {
    const char* n = numpy_name(expected);
    try {
      arr = n != nullptr ? numpy().attr("asarray")(obj, py::arg("dtype") = n) : numpy().attr("asarray")(obj);
    } catch (const py::error_already_set& e) {
      throw_invalid_argument("input '" + name + "': cannot convert a " +
                             std::string(py::str(obj.get_type().attr("__name__"))) + " to a numpy array: " + e.what());
    }
  }
  const py::dtype dt = arr.dtype();
  const DType dtype = loom_dtype(dt);
  if (dtype == DType::kUndefined)
    throw_invalid_argument("input '" + name + "': numpy dtype " + std::string(py::str(py::handle(dt))) + " has no ONNX type");
  Dims dims(arr.shape(), arr.shape() + arr.ndim());
  if (dtype == DType::kString) return strings_to_tensor(arr, name, std::move(dims));
  if (!dt.attr("isnative").cast<bool>()) arr = arr.attr("astype")(dt.attr("newbyteorder")("="));
  if (!(arr.flags() & py::array::c_style)) arr = numpy().attr("ascontiguousarray")(arr);
  Tensor t = value_or_throw(Tensor::from_bytes(dtype, std::move(dims), arr.data(), static_cast<size_t>(arr.nbytes())));
  if (dtype == DType::kBool) check(check_bool_values(t).with_context("input '" + name + "'"));
  return t;
}

Value to_value(py::handle obj, const std::string& name, const ValueInfo* info) {
  if (obj.is_none()) return Value::none();
  const DType expected = info != nullptr ? info->dtype : DType::kUndefined;
  const bool sequence_input = info != nullptr && (info->kind == ValueKind::kSequence || info->kind == ValueKind::kOptional);
  if (sequence_input && (py::isinstance<py::list>(obj) || py::isinstance<py::tuple>(obj))) {
    std::vector<Tensor> elements;
    size_t i = 0;
    for (py::handle e : obj) elements.push_back(to_tensor(e, name + "[" + std::to_string(i++) + "]", expected));
    DType dtype = expected;
    if (dtype == DType::kUndefined && !elements.empty()) dtype = elements.front().dtype();
    return Value::sequence(dtype, std::move(elements));
  }
  return Value(to_tensor(obj, name, expected));
}

py::object to_numpy(Tensor tensor) {
  std::vector<py::ssize_t> shape(tensor.dims().begin(), tensor.dims().end());
  if (tensor.is_string()) {
    py::list items;
    for (const std::string& s : tensor.strings()) {
      PyObject* u = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), nullptr);
      if (u == nullptr) {  // not UTF-8: hand the bytes over as they are
        PyErr_Clear();
        items.append(py::bytes(s));
      } else {
        items.append(py::reinterpret_steal<py::object>(u));
      }
    }
    py::object arr = numpy().attr("empty")(py::len(items), py::arg("dtype") = "object");
    if (py::len(items) > 0) arr.attr("__setitem__")(py::slice(0, py::len(items), 1), items);
    return arr.attr("reshape")(py::tuple(py::cast(shape)));
  }
  py::dtype dt = numpy_dtype(tensor.dtype());
  auto* holder = new Tensor(std::move(tensor));
  py::capsule base(holder, [](void* p) { delete static_cast<Tensor*>(p); });
  return py::array(dt, shape, {}, holder->mutable_data(), base);
}

py::object to_python(Value value) {
  if (value.is_none()) return py::none();
  if (value.is_tensor()) return to_numpy(value.tensor());
  py::list out;
  for (const Tensor& t : value.elements()) out.append(to_numpy(t));
  return out;
}

}  // namespace loom::python
