#include "transform/passes/quantization_params.h"

namespace loom::transform {
namespace {

bool quantized_type(DType t, bool quantize) {
  return t == DType::kUint8 || t == DType::kInt8 || (!quantize && t == DType::kInt32);
}

std::optional<std::vector<int64_t>> integer_values(const ir::Graph& g, const std::string& value) {
  auto it = g.initializers.find(value);
  if (it == g.initializers.end() || g.is_graph_input(value)) return std::nullopt;
  const Tensor& t = it->second;
  const size_t n = static_cast<size_t>(t.element_count());
  std::vector<int64_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    switch (t.dtype()) {
      case DType::kUint8: out[i] = t.data_as<uint8_t>()[i]; break;
      case DType::kInt8: out[i] = t.data_as<int8_t>()[i]; break;
      case DType::kInt32: out[i] = t.data_as<int32_t>()[i]; break;
      default: return std::nullopt;
    }
  }
  return out;
}

}  // namespace

bool QuantizationParams::symmetric() const {
  for (int64_t z : zero_point)
    if (z != 0) return false;
  return true;
}

std::optional<QuantizationParams> quantization_params(const GraphMatcher& m, const ir::Node& n, bool quantize) {
  const std::string op = quantize ? "QuantizeLinear" : "DequantizeLinear";
  if (n.op_type != op || !n.domain.empty() || n.outputs.size() != 1 || n.inputs.size() < 2 || n.inputs.size() > 3)
    return std::nullopt;
  if (n.int_attr("block_size", 0) != 0) return std::nullopt;
  // Float8 quantization and the opset-21 output_dtype are not what the QDQ passes handle.
  if (n.find_attribute("output_dtype") != nullptr) return std::nullopt;
  const ir::Graph& g = m.graph();
  QuantizationParams p;
  p.node = &n;
  p.quantized = quantize ? n.outputs[0] : n.inputs[0];
  p.scale_value = n.inputs[1];
  auto scale = m.float_constant(n.inputs[1]);
  if (!scale || scale->empty()) return std::nullopt;
  p.scale = *scale;
  if (n.inputs.size() == 3 && !n.inputs[2].empty()) {
    p.zero_point_value = n.inputs[2];
    auto z = integer_values(g, n.inputs[2]);
    if (!z || z->size() != p.scale.size()) return std::nullopt;
    p.zero_point = *z;
    p.type = g.initializers.at(n.inputs[2]).dtype();
  } else {
    p.zero_point.assign(p.scale.size(), 0);
    const ir::ValueType* t = g.type_of(quantize ? n.outputs[0] : n.inputs[0]);
    p.type = quantize ? DType::kUint8 : (t != nullptr ? t->dtype : DType::kUndefined);
  }
  if (!quantized_type(p.type, quantize)) return std::nullopt;
  if (const ir::ValueType* t = g.type_of(p.quantized); t != nullptr && t->dtype != DType::kUndefined && t->dtype != p.type)
    return std::nullopt;
  if (!p.per_tensor()) {
    const ir::ValueType* t = g.type_of(n.inputs[0]);
    if (t == nullptr || !t->has_shape) return std::nullopt;
    const int64_t rank = static_cast<int64_t>(t->dims.size());
    int64_t axis = n.int_attr("axis", 1);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return std::nullopt;
    const int64_t extent = t->dims[static_cast<size_t>(axis)].value;
    if (extent >= 0 && extent != static_cast<int64_t>(p.scale.size())) return std::nullopt;
    p.axis = axis;
  }
  return p;
}

std::optional<QuantizationParams> dequantized_from(const GraphMatcher& m, const std::string& value) {
  const ir::Node* dq = m.producer(value);
  if (dq == nullptr) return std::nullopt;
  return quantization_params(m, *dq, /*quantize=*/false);
}

}  // namespace loom::transform
