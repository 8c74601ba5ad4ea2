#include "onnx/map_proto.h"

#include <cstring>
#include <vector>

#include "onnx/tensor_proto.h"

namespace loom::onnxio {

Expected<Value> map_from_proto(const ::onnx::MapProto& proto, const std::string& dir, const std::string& label) {
  Tensor keys;
  int64_t count = 0;
  if (proto.key_type() == ::onnx::TensorProto::INT64) {
    if (proto.string_keys_size() > 0) return invalid_argument(label + ": int64 keys, but it holds string keys");
    count = proto.keys_size();
    keys = Tensor::from_vector(DType::kInt64, {count}, std::vector<int64_t>(proto.keys().begin(), proto.keys().end()));
  } else if (proto.key_type() == ::onnx::TensorProto::STRING) {
    if (proto.keys_size() > 0) return invalid_argument(label + ": string keys, but it holds integer keys");
    count = proto.string_keys_size();
    keys = Tensor::from_strings({count}, std::vector<std::string>(proto.string_keys().begin(), proto.string_keys().end()));
  } else {
    return not_implemented(label + ": key type " + std::to_string(proto.key_type()) +
                           " (Loom's maps have int64 or string keys, as ZipMap, CastMap and DictVectorizer use)");
  }
  const ::onnx::SequenceProto& values = proto.values();
  if (values.tensor_values_size() != count)
    return invalid_argument(label + ": " + std::to_string(count) + " keys but " +
                            std::to_string(values.tensor_values_size()) + " values");
  if (values.sequence_values_size() || values.map_values_size() || values.optional_values_size() ||
      values.sparse_tensor_values_size())
    return not_implemented(label + ": values other than scalar tensors");
  if (count == 0) return Value::map(std::move(keys), Tensor());
  std::vector<Tensor> scalars;
  scalars.reserve(static_cast<size_t>(count));
  for (int i = 0; i < values.tensor_values_size(); ++i) {
    auto t = tensor_from_proto(values.tensor_values(i), dir);
    if (!t) return t.status().with_context(label + ", value " + std::to_string(i));
    if (t->element_count() != 1)
      return not_implemented(label + ": value " + std::to_string(i) + " holds " + std::to_string(t->element_count()) +
                             " elements (Loom's maps hold one scalar per key)");
    if (!scalars.empty() && t->dtype() != scalars.front().dtype())
      return invalid_argument(label + ": value " + std::to_string(i) + " is " + dtype_name(t->dtype()) +
                              " but value 0 is " + dtype_name(scalars.front().dtype()));
    scalars.push_back(std::move(t).value());
  }
  const DType dtype = scalars.front().dtype();
  if (dtype == DType::kString) {
    std::vector<std::string> s;
    for (const Tensor& t : scalars) s.push_back(t.strings().front());
    return Value::map(std::move(keys), Tensor::from_strings({count}, std::move(s)));
  }
  const size_t size = dtype_size(dtype);
  if (size == 0) return not_implemented(label + ": values of type " + dtype_name(dtype));
  std::vector<uint8_t> bytes(size * scalars.size());
  for (size_t i = 0; i < scalars.size(); ++i) std::memcpy(bytes.data() + i * size, scalars[i].data(), size);
  LOOM_ASSIGN_OR_RETURN(Tensor v, Tensor::from_bytes(dtype, {count}, bytes.data(), bytes.size()));
  return Value::map(std::move(keys), std::move(v));
}

Expected<::onnx::MapProto> map_to_proto(const Value& map, const std::string& name) {
  ::onnx::MapProto proto;
  proto.set_name(name);
  const Tensor& keys = map.map_keys();
  const Tensor& values = map.map_values();
  if (keys.dims().size() != 1 || keys.element_count() != values.element_count())
    return invalid_argument("map '" + name + "': keys and values must be 1-D of one length");
  if (keys.dtype() == DType::kInt64) {
    proto.set_key_type(::onnx::TensorProto::INT64);
    proto.mutable_keys()->Add(keys.data_as<int64_t>(), keys.data_as<int64_t>() + keys.element_count());
  } else if (keys.dtype() == DType::kString) {
    proto.set_key_type(::onnx::TensorProto::STRING);
    for (const std::string& k : keys.strings()) proto.add_string_keys(k);
  } else {
    return invalid_argument("map '" + name + "': keys of type " + dtype_name(keys.dtype()));
  }
  // As numpy_helper.from_list writes a list of scalars: one 0-d tensor each.
  ::onnx::SequenceProto* seq = proto.mutable_values();
  seq->set_elem_type(keys.element_count() > 0 ? ::onnx::SequenceProto::TENSOR : ::onnx::SequenceProto::UNDEFINED);
  const size_t size = dtype_size(values.dtype());
  for (int64_t i = 0; i < values.element_count(); ++i) {
    Tensor scalar;
    if (values.dtype() == DType::kString) {
      scalar = Tensor::from_strings({}, {values.strings()[static_cast<size_t>(i)]});
    } else {
      LOOM_ASSIGN_OR_RETURN(scalar, Tensor::from_bytes(values.dtype(), {},
                                                      static_cast<const uint8_t*>(values.data()) + i * size, size));
    }
    *seq->add_tensor_values() = tensor_to_proto(scalar, "");
  }
  return proto;
}

}  // namespace loom::onnxio
