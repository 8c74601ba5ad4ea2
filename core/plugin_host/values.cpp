// Helpers for LOOM_Value: creating, copying and converting values.
#include <cstring>

#include "plugin_host/abi_objects.h"

namespace loom::plugin_host {

std::unique_ptr<LOOM_Value> tensor_value(const Tensor& t) {
  auto v = std::make_unique<LOOM_Value>();
  v->kind = LOOM_VALUE_TENSOR;
  v->owned = t;
  v->tensor = *view_of(v->owned);
  if (v->owned.is_string()) v->tensor.strings = &v->owned.mutable_strings();
  return v;
}

std::unique_ptr<LOOM_Value> tensor_view_value(DType dtype, const Dims& dims, void* data, const LOOM_MemoryInfo* memory) {
  auto v = std::make_unique<LOOM_Value>();
  v->kind = LOOM_VALUE_TENSOR;
  v->tensor.dtype = static_cast<int32_t>(dtype);
  v->tensor.dims = dims;
  auto count = checked_element_count(dims);
  v->tensor.count = count ? static_cast<uint64_t>(*count) : 0;
  v->tensor.data = data;
  v->tensor.memory = memory;
  return v;
}

Expected<std::unique_ptr<LOOM_Value>> new_tensor_value(DType dtype, const Dims& dims) {
  LOOM_ASSIGN_OR_RETURN(Tensor t, Tensor::zeros(dtype, dims));
  return tensor_value(t);
}

Expected<std::unique_ptr<LOOM_Value>> clone_value(const LOOM_Value& v) {
  auto out = std::make_unique<LOOM_Value>();
  out->kind = v.kind;
  out->elem_dtype = v.elem_dtype;
  if (v.kind == LOOM_VALUE_TENSOR) {
    const LOOM_Tensor& t = v.tensor;
    if (t.memory != nullptr && !t.memory->host_accessible)
      return not_implemented("cannot copy a value held in memory '" + memory_name(*t.memory) + "' on the host");
    if (t.dtype == LOOM_DTYPE_STRING) {
      std::vector<std::string> s = t.strings ? *t.strings : std::vector<std::string>();
      return tensor_value(Tensor::from_strings(t.dims, std::move(s)));
    }
    LOOM_ASSIGN_OR_RETURN(Tensor copy, Tensor::from_bytes(static_cast<DType>(t.dtype), t.dims, t.data,
                                                          t.count * dtype_size(static_cast<DType>(t.dtype))));
    return tensor_value(copy);
  }
  for (const auto& e : v.elements) {
    LOOM_ASSIGN_OR_RETURN(std::unique_ptr<LOOM_Value> c, clone_value(*e));
    out->elements.push_back(std::move(c));
  }
  return out;
}

Status check_map_parts(DType key_dtype, const Dims& key_dims, const Dims& value_dims) {
  if (key_dtype != DType::kInt64 && key_dtype != DType::kString)
    return invalid_argument("map keys must be int64 or string, got " + dtype_name(key_dtype));
  if (key_dims.size() != 1 || value_dims.size() != 1 || key_dims[0] != value_dims[0])
    return invalid_argument("map keys " + dims_string(key_dims) + " and values " + dims_string(value_dims) +
                            " must be 1-D of one length");
  return Status::ok();
}

Expected<std::unique_ptr<LOOM_Value>> make_map_value(std::unique_ptr<LOOM_Value> keys,
                                                     std::unique_ptr<LOOM_Value> values) {
  if (!keys || !values || keys->kind != LOOM_VALUE_TENSOR || values->kind != LOOM_VALUE_TENSOR)
    return invalid_argument("a map's keys and values must be tensors");
  const LOOM_Tensor &k = keys->tensor, &v = values->tensor;
  LOOM_RETURN_IF_ERROR(check_map_parts(static_cast<DType>(k.dtype), k.dims, v.dims));
  for (const LOOM_Tensor* t : {&k, &v})
    if (t->memory != nullptr && !t->memory->host_accessible)
      return not_implemented("map keys and values must be in host memory");
  auto m = std::make_unique<LOOM_Value>();
  m->kind = LOOM_VALUE_MAP;
  m->elem_dtype = v.dtype;
  m->elements.push_back(std::move(keys));
  m->elements.push_back(std::move(values));
  return m;
}

std::unique_ptr<LOOM_Value> from_public(const Value& v) {
  if (v.is_tensor()) return tensor_value(v.tensor());
  auto out = std::make_unique<LOOM_Value>();
  if (v.is_map()) {  // checked by the caller (session_inputs.cpp) before it gets here
    out->kind = LOOM_VALUE_MAP;
    out->elem_dtype = static_cast<int32_t>(v.map_values().dtype());
    out->elements.push_back(tensor_value(v.map_keys()));
    out->elements.push_back(tensor_value(v.map_values()));
  } else if (v.is_sequence()) {
    out->kind = LOOM_VALUE_SEQUENCE;
    out->elem_dtype = static_cast<int32_t>(v.sequence_dtype());
    for (const Tensor& t : v.elements()) out->elements.push_back(tensor_value(t));
    for (const Value& m : v.maps()) out->elements.push_back(from_public(m));
  }
  return out;
}

Expected<Value> to_public(const LOOM_Value& v) {
  if (v.kind == LOOM_VALUE_NONE) return Value::none();
  if (v.kind == LOOM_VALUE_MAP) {
    LOOM_ASSIGN_OR_RETURN(Value keys, to_public(*v.elements[0]));
    LOOM_ASSIGN_OR_RETURN(Value values, to_public(*v.elements[1]));
    return Value::map(keys.tensor(), values.tensor());
  }
  if (v.kind == LOOM_VALUE_SEQUENCE) {
    std::vector<Tensor> elems;
    std::vector<Value> maps;
    for (const auto& e : v.elements) {
      LOOM_ASSIGN_OR_RETURN(Value ev, to_public(*e));
      if (ev.is_map()) maps.push_back(std::move(ev));
      else elems.push_back(ev.tensor());
    }
    if (!maps.empty()) return Value::sequence_of_maps(static_cast<DType>(v.elem_dtype), std::move(maps));
    return Value::sequence(static_cast<DType>(v.elem_dtype), std::move(elems));
  }
  // Share the storage when the view covers all of it; copy otherwise (arena).
  const LOOM_Tensor& t = v.tensor;
  if (v.owned.dtype() != DType::kUndefined && (t.strings != nullptr || v.owned.data() == t.data)) return Value(v.owned);
  if (t.memory != nullptr && !t.memory->host_accessible)
    return not_implemented("value in memory '" + memory_name(*t.memory) + "' was not copied to the host");
  LOOM_ASSIGN_OR_RETURN(Tensor copy, Tensor::from_bytes(static_cast<DType>(t.dtype), t.dims, t.data,
                                                        t.count * dtype_size(static_cast<DType>(t.dtype))));
  return Value(copy);
}

}  // namespace loom::plugin_host
