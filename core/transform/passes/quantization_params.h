// The constant parameters of QuantizeLinear / DequantizeLinear nodes, as the
// QDQ passes need them: what the quantized side's element type is, the
// scales and zero points, and along which axis they apply.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "transform/framework/graph_matcher.h"

namespace loom::transform {

struct QuantizationParams {
  const ir::Node* node = nullptr;  // the Q or DQ node
  std::string quantized;           // DQ: its input; Q: its output
  DType type = DType::kUndefined;  // of the quantized side: uint8, int8 or int32 (DQ only)
  std::vector<float> scale;        // one, or one per index of `axis`
  std::vector<int64_t> zero_point; // as many as scale (0 when the input is absent)
  std::string scale_value;         // the scale's value name
  std::string zero_point_value;    // "" when the node has no zero point input
  int64_t axis = -1;               // normalised; -1 when per tensor (one scale)

  bool per_tensor() const { return scale.size() == 1; }
  // Quantized to 8 bits (uint8 / int8), as activations and weights are.
  bool eight_bit() const { return type == DType::kUint8 || type == DType::kInt8; }
  // Zero points all 0.
  bool symmetric() const;
};

// The parameters of `n` when it is a QuantizeLinear (`quantize`) or
// DequantizeLinear in the default domain whose scale and zero point are
// constants, over uint8 / int8 (int32 too for DQ), without block
// quantization and with a known-rank input for per-axis scales; else
// nullopt.
std::optional<QuantizationParams> quantization_params(const GraphMatcher& m, const ir::Node& n, bool quantize);

// The DequantizeLinear producing `value`, when quantization_params accepts it.
std::optional<QuantizationParams> dequantized_from(const GraphMatcher& m, const std::string& value);

// The quantized value of type `type` that stands for 0: `zero_point_value`,
// or a new scalar zero initializer added through `add` when the node had
// none (QLinear ops require the input).
template <class AddInitializer>
std::string zero_point_or_new(const QuantizationParams& p, AddInitializer add) {
  if (!p.zero_point_value.empty()) return p.zero_point_value;
  Tensor zero = Tensor::zeros(p.type, p.per_tensor() ? Dims{} : Dims{static_cast<int64_t>(p.scale.size())}).value();
  return add(p.quantized + "_zero_point", std::move(zero));
}

}  // namespace loom::transform
