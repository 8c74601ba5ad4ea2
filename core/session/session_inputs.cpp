// Checks of a run's feeds against the model's declared inputs (names,
// kinds, element types, ranks and fixed dims, bool bytes), and the shape
// signature that keys memory patterns and recorded runs.
#include "plugin_host/abi_objects.h"
#include "session/session_impl.h"

namespace loom {

bool Session::Impl::shape_signature(const std::map<std::string, Value>& feeds, std::string* signature) {
  signature->clear();
  for (const auto& [name, v] : feeds) {
    if (!v.is_tensor()) return false;
    *signature += name + ":" + dims_string(v.tensor().dims()) + ";";
  }
  return true;
}

Status Session::Impl::check_tensor_input(const std::string& name, DType dtype, const Dims& dims) const {
  const ValueInfo* info = nullptr;
  for (const ValueInfo& v : inputs)
    if (v.name == name) info = &v;
  if (info == nullptr) return Status::ok();  // an overridable initializer
  const std::string where = model_name + ": input '" + name + "'";
  if (info->kind == ValueKind::kSequence) return invalid_argument(where + " must be a sequence");
  if (info->dtype != DType::kUndefined && info->dtype != dtype)
    return invalid_argument(where + " must be " + dtype_name(info->dtype) + ", got " + dtype_name(dtype));
  if (!info->has_shape) return Status::ok();
  if (info->shape.size() != dims.size())
    return invalid_argument(where + " must have rank " + std::to_string(info->shape.size()) + ", got shape " +
                            dims_string(dims));
  for (size_t i = 0; i < info->shape.size(); ++i)
    if (info->shape[i].value >= 0 && info->shape[i].value != dims[i])
      return invalid_argument(where + " dimension " + std::to_string(i) + " must be " +
                              std::to_string(info->shape[i].value) + ", got shape " + dims_string(dims));
  return Status::ok();
}

const std::map<std::string, Value>& Session::Impl::with_scalar_feeds(const std::map<std::string, Value>& feeds,
                                                                      std::map<std::string, Value>& storage) const {
  auto one_for_scalar = [&](const std::string& name, const Value& v) {
    if (!v.is_tensor() || v.tensor().dims() != Dims{1}) return false;
    for (const ValueInfo& info : inputs)
      if (info.name == name) return info.kind == ValueKind::kTensor && info.has_shape && info.shape.empty();
    return false;
  };
  bool any = false;
  for (const auto& [name, v] : feeds) any = any || one_for_scalar(name, v);
  if (!any) return feeds;
  storage = feeds;
  for (auto& [name, v] : storage) {
    if (!one_for_scalar(name, v)) continue;
    const Tensor& t = v.tensor();
    if (t.is_string()) {
      v = Value(Tensor::from_strings({}, t.strings()));
    } else if (auto scalar = Tensor::from_bytes(t.dtype(), {}, t.data(), t.byte_size())) {
      v = Value(*scalar);
    }
  }
  return storage;
}

namespace {

// A map fed as input: int64 or string keys and values, 1-D of one length,
// of the declared types where the model declares them.
Status check_map_input(const ValueInfo& info, const Value& v) {
  const Tensor &k = v.map_keys(), &x = v.map_values();
  LOOM_RETURN_IF_ERROR(plugin_host::check_map_parts(k.dtype(), k.dims(), x.dims()));
  if (info.key_dtype != DType::kUndefined && info.key_dtype != k.dtype())
    return invalid_argument("map keys must be " + dtype_name(info.key_dtype) + ", got " + dtype_name(k.dtype()));
  if (info.dtype != DType::kUndefined && info.dtype != x.dtype())
    return invalid_argument("map values must be " + dtype_name(info.dtype) + ", got " + dtype_name(x.dtype()));
  return check_bool_values(x);
}

}  // namespace

Status Session::Impl::validate_inputs(const std::map<std::string, Value>& feeds) const {
  auto names = [&] {
    std::string s;
    for (const ValueInfo& v : inputs) s += (s.empty() ? "" : ", ") + v.name;
    return s;
  };
  for (const auto& [name, value] : feeds) {
    const bool overridable = graph->is_graph_input(name) && graph->is_initializer(name);
    const ValueInfo* info = nullptr;
    for (const ValueInfo& v : inputs)
      if (v.name == name) info = &v;
    if (info == nullptr && !overridable)
      return invalid_argument(model_name + ": unknown input '" + name + "' (model inputs: " + names() + ")");
    if (info == nullptr) continue;
    const std::string where = model_name + ": input '" + name + "'";
    if (info->kind == ValueKind::kSequence && !value.is_sequence())
      return invalid_argument(where + " must be a sequence");
    if (info->kind == ValueKind::kTensor && !value.is_tensor()) return invalid_argument(where + " must be a tensor");
    if (info->kind == ValueKind::kMap && !value.is_map()) return invalid_argument(where + " must be a map");
    if (value.is_map()) {
      LOOM_RETURN_IF_ERROR(check_map_input(*info, value).with_context(where));
      continue;
    }
    if (value.is_sequence()) {
      if (info->dtype != DType::kUndefined && value.sequence_dtype() != DType::kUndefined &&
          info->dtype != value.sequence_dtype())
        return invalid_argument(where + " must be a sequence of " + dtype_name(info->dtype) + ", got " +
                                dtype_name(value.sequence_dtype()));
      continue;
    }
    if (!value.is_tensor()) continue;  // an empty optional
    LOOM_RETURN_IF_ERROR(check_tensor_input(name, value.tensor().dtype(), value.tensor().dims()));
    LOOM_RETURN_IF_ERROR(check_bool_values(value.tensor()).with_context(where));
  }
  for (const std::string& r : required_inputs)
    if (!feeds.count(r)) return invalid_argument(model_name + ": missing input '" + r + "'");
  return Status::ok();
}

}  // namespace loom
