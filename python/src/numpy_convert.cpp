#include "numpy_convert.h"

#include <pybind11/stl.h>

#include <vector>

#include "errors.h"
#include "loom/sdk/dtype.h"

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

// ml_dtypes' bfloat16 when that package is installed, else None.
py::object ml_dtypes_bfloat16() {
  static py::object* type = [] {
    try {
      return new py::object(py::module_::import("ml_dtypes").attr("bfloat16"));
    } catch (const py::error_already_set&) {
      return new py::object(py::none());
    }
  }();
  return *type;
}

// A bfloat16 tensor as float32 (exact widening), the way onnx.numpy_helper
// reads bfloat16 tensors, for Pythons without ml_dtypes.
py::object bfloat16_as_float32(const Tensor& t) {
  std::vector<py::ssize_t> shape(t.dims().begin(), t.dims().end());
  py::array_t<float> out(shape);
  const auto* in = static_cast<const sdk::BFloat16*>(t.data());
  float* dst = out.mutable_data();
  for (int64_t i = 0; i < t.element_count(); ++i) dst[i] = static_cast<float>(in[i]);
  return out;
}

// A float array as bfloat16 (round to nearest even, NaN kept), for a
// bfloat16 model input fed from numpy without ml_dtypes.
Tensor float_to_bfloat16(const py::array& arr, Dims dims) {
  py::array_t<float, py::array::c_style | py::array::forcecast> f(arr);
  std::vector<sdk::BFloat16> bits;
  bits.reserve(static_cast<size_t>(f.size()));
  for (py::ssize_t i = 0; i < f.size(); ++i) bits.emplace_back(f.data()[i]);
  return value_or_throw(
      Tensor::from_bytes(DType::kBFloat16, std::move(dims), bits.data(), bits.size() * sizeof(sdk::BFloat16)));
}

}  // namespace

py::dtype numpy_dtype(DType dtype) {
  if (const char* n = numpy_name(dtype)) return py::dtype(n);
  if (dtype == DType::kBFloat16) {
    py::object bf16 = ml_dtypes_bfloat16();
    if (!bf16.is_none()) return py::dtype::from_args(bf16);
    return py::dtype("float32");  // to_numpy widens; inputs are rounded (float_to_bfloat16)
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

std::string type_string(ValueKind kind, DType dtype, DType key_dtype) {
  const std::string tensor = "tensor(" + (dtype == DType::kUndefined ? std::string("undefined") : dtype_name(dtype)) + ")";
  // ONNX Runtime's spelling: map(int64,tensor(float)), seq(map(...)).
  const std::string map = "map(" + dtype_name(key_dtype) + "," + tensor + ")";
  switch (kind) {
    case ValueKind::kTensor: return tensor;
    case ValueKind::kSequence: return "seq(" + (key_dtype != DType::kUndefined ? map : tensor) + ")";
    case ValueKind::kOptional: return "optional(" + tensor + ")";
    case ValueKind::kMap: return map;
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
  if (expected == DType::kBFloat16 && dt.kind() == 'f')  // numpy has no bfloat16 of its own
    return float_to_bfloat16(arr, Dims(arr.shape(), arr.shape() + arr.ndim()));
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

// A dict fed to a map input (DictVectorizer, CastMap), as ONNX Runtime
// takes it: keys int64 or str, values of the declared type.
Value dict_to_map(py::handle obj, const std::string& name, const ValueInfo& info) {
  py::list keys, values;
  for (auto item : py::reinterpret_borrow<py::dict>(obj)) {
    keys.append(item.first);
    values.append(item.second);
  }
  const DType key = info.key_dtype != DType::kUndefined ? info.key_dtype : DType::kInt64;
  const py::object np = numpy();
  const auto key_type = key == DType::kString ? py::object(py::str("object")) : py::object(py::str("int64"));
  Tensor k = to_tensor(np.attr("array")(keys, py::arg("dtype") = key_type), name + " (keys)", key);
  py::object vals = info.dtype == DType::kString || info.dtype == DType::kUndefined
                        ? np.attr("array")(values)
                        : np.attr("array")(values, py::arg("dtype") = numpy_dtype(info.dtype));
  Tensor x = to_tensor(vals, name + " (values)", info.dtype);
  return Value::map(std::move(k), std::move(x));
}

Value to_value(py::handle obj, const std::string& name, const ValueInfo* info) {
  if (obj.is_none()) return Value::none();
  if (info != nullptr && info->kind == ValueKind::kMap && py::isinstance<py::dict>(obj))
    return dict_to_map(obj, name, *info);
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
  if (tensor.dtype() == DType::kBFloat16 && ml_dtypes_bfloat16().is_none()) return bfloat16_as_float32(tensor);
  py::dtype dt = numpy_dtype(tensor.dtype());
  auto* holder = new Tensor(std::move(tensor));
  py::capsule base(holder, [](void* p) { delete static_cast<Tensor*>(p); });
  return py::array(dt, shape, {}, holder->mutable_data(), base);
}

// A map as a dict of Python scalars (ONNX Runtime returns ZipMap's maps so).
py::dict map_to_dict(const Value& m) {
  py::dict d;
  py::list keys = to_numpy(m.map_keys()).attr("tolist")();
  py::list values = to_numpy(m.map_values()).attr("tolist")();
  for (size_t i = 0; i < py::len(keys); ++i) d[keys[i]] = values[i];
  return d;
}

py::object to_python(Value value) {
  if (value.is_none()) return py::none();
  if (value.is_tensor()) return to_numpy(value.tensor());
  if (value.is_map()) return map_to_dict(value);
  if (value.is_sequence_of_maps()) {
    py::list out;
    for (const Value& m : value.maps()) out.append(map_to_dict(m));
    return out;
  }
  py::list out;
  for (const Tensor& t : value.elements()) out.append(to_numpy(t));
  return out;
}

}  // namespace loom::python
