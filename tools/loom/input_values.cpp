#include "input_values.h"

#include "loom/tensor_io.h"
#include "tensor_values.h"

namespace loom::tools {
namespace {

// Applies the bfloat16-as-uint16 rule, then checks the type.
Expected<Tensor> conform(Tensor t, const ValueInfo& info, const std::string& path, const std::string& where) {
  if (info.dtype == DType::kBFloat16 && t.dtype() == DType::kUint16) {
    auto as_bf16 = Tensor::from_bytes(DType::kBFloat16, t.dims(), t.data(), t.byte_size());
    if (!as_bf16) return as_bf16.status();
    t = std::move(as_bf16).value();
  }
  if (info.dtype != DType::kUndefined && t.dtype() != info.dtype)
    return invalid_argument(path + " holds " + where + dtype_name(t.dtype()) + " but the model expects " +
                            dtype_name(info.dtype));
  return t;
}

}  // namespace

Expected<Value> read_input_value(const ValueInfo& info, const std::string& path) {
  LOOM_ASSIGN_OR_RETURN(Value v, read_value_pb(path, info.kind));
  if (v.is_tensor()) {
    LOOM_ASSIGN_OR_RETURN(Tensor t, conform(v.tensor(), info, path, ""));
    return Value(std::move(t));
  }
  if (v.is_sequence()) {
    std::vector<Tensor> elements;
    elements.reserve(v.elements().size());
    for (size_t i = 0; i < v.elements().size(); ++i) {
      LOOM_ASSIGN_OR_RETURN(Tensor t,
                            conform(v.elements()[i], info, path, "(element " + std::to_string(i) + ") "));
      elements.push_back(std::move(t));
    }
    const DType dtype = elements.empty() ? info.dtype : elements.front().dtype();
    return Value::sequence(dtype, std::move(elements));
  }
  return v;  // an empty optional
}

// An integer input named like an attention mask gets 0s and 1s, the only
// values such masks hold (transformer fusions rely on it, as ONNX Runtime's do).
bool mask_like(const ValueInfo& info) {
  std::string lower = info.name;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const bool integer = info.dtype == DType::kInt32 || info.dtype == DType::kInt64 || info.dtype == DType::kBool;
  return integer && lower.find("mask") != std::string::npos;
}

Expected<Value> random_input_value(const ValueInfo& info, const Dims& dims, std::mt19937_64& rng) {
  if (info.kind != ValueKind::kSequence) {
    LOOM_ASSIGN_OR_RETURN(Tensor t, random_tensor(info.dtype, dims, rng));
    if (mask_like(info)) {
      std::uniform_int_distribution<int> coin(0, 1);
      for (int64_t i = 0; i < t.element_count(); ++i) {
        if (info.dtype == DType::kInt32) t.mutable_data_as<int32_t>()[i] = coin(rng);
        else if (info.dtype == DType::kInt64) t.mutable_data_as<int64_t>()[i] = coin(rng);
      }
    }
    return Value(std::move(t));
  }
  std::vector<Tensor> elements;
  for (int i = 0; i < 2; ++i) {
    LOOM_ASSIGN_OR_RETURN(Tensor t, random_tensor(info.dtype, dims, rng));
    elements.push_back(std::move(t));
  }
  return Value::sequence(info.dtype, std::move(elements));
}

}  // namespace loom::tools
