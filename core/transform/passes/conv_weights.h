// Per-output-channel rewrites of Conv / ConvTranspose weights, shared by the
// passes that fold a following per-channel affine op (BatchNormalization,
// Mul / Add by a channel constant) into the convolution's W and B.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace loom::transform {

// A constant float tensor (an initializer that a run cannot override), or null.
inline const Tensor* float_initializer(const ir::Graph& g, const std::string& v) {
  auto it = g.initializers.find(v);
  if (v.empty() || it == g.initializers.end() || g.is_graph_input(v) || it->second.dtype() != DType::kFloat)
    return nullptr;
  return &it->second;
}

// A Conv / ConvTranspose (default domain) with a constant float weight of
// rank >= 3 and, when present, a constant float bias of [M]: its parts.
struct ConvParts {
  const Tensor* w = nullptr;
  const Tensor* b = nullptr;  // null when the node has no bias
  int64_t out_channels = 0;   // M
  bool transposed = false;
};

inline std::optional<ConvParts> conv_parts(const ir::Graph& g, const ir::Node& n) {
  if ((n.op_type != "Conv" && n.op_type != "ConvTranspose") || !n.domain.empty() || n.outputs.size() != 1 ||
      n.inputs.size() < 2 || n.inputs.size() > 3 || n.inputs[0].empty())
    return std::nullopt;
  ConvParts p;
  p.transposed = n.op_type == "ConvTranspose";
  p.w = float_initializer(g, n.inputs[1]);
  if (p.w == nullptr || p.w->dims().size() < 3) return std::nullopt;
  int64_t group = 1;
  if (const ir::Attribute* a = n.find_attribute("group")) group = a->i;
  if (group < 1) return std::nullopt;
  const Dims& d = p.w->dims();
  // Conv: W is [M, C/group, k...]; ConvTranspose: W is [C, M/group, k...].
  if (p.transposed) {
    if (d[0] % group != 0) return std::nullopt;
    p.out_channels = d[1] * group;
  } else {
    if (d[0] % group != 0) return std::nullopt;
    p.out_channels = d[0];
  }
  if (p.out_channels <= 0) return std::nullopt;
  if (n.inputs.size() == 3 && !n.inputs[2].empty()) {
    p.b = float_initializer(g, n.inputs[2]);
    if (p.b == nullptr || p.b->dims() != Dims{p.out_channels}) return std::nullopt;
  }
  return p;
}

// W with every weight of output channel m multiplied by scale[m] (computed
// in double, rounded once).
inline Tensor scale_conv_weight(const ir::Node& n, const ConvParts& p, const std::vector<double>& scale) {
  const Dims& d = p.w->dims();
  const int64_t count = p.w->element_count();
  const float* w = p.w->data_as<float>();
  Tensor scaled = Tensor::zeros(DType::kFloat, d).value();
  float* out = scaled.mutable_data_as<float>();
  // Loops over whole channels rather than dividing per element: this runs
  // on every weight of the model at session creation.
  if (!p.transposed) {
    const int64_t block = count / d[0];  // one output channel's weights are contiguous
    for (int64_t m = 0; m < d[0]; ++m) {
      const double s = scale[m];
      for (int64_t i = m * block; i < (m + 1) * block; ++i) out[i] = static_cast<float>(w[i] * s);
    }
  } else {
    int64_t group = 1;
    if (const ir::Attribute* a = n.find_attribute("group")) group = a->i;
    const int64_t kernel = count / (d[0] * d[1]);
    const int64_t in_per_group = d[0] / group;
    // Element [c, j, k...] feeds output channel (c / in_per_group) * (M/group) + j.
    for (int64_t c = 0; c < d[0]; ++c)
      for (int64_t j = 0; j < d[1]; ++j) {
        const double s = scale[(c / in_per_group) * d[1] + j];
        const int64_t first = (c * d[1] + j) * kernel;
        for (int64_t i = first; i < first + kernel; ++i) out[i] = static_cast<float>(w[i] * s);
      }
  }
  return scaled;
}

// The conv node rewritten to read `w` and `b` and produce `output`.
inline ir::Node rewired_conv(const ir::Node& conv, const std::string& w, const std::string& b,
                             const std::string& output) {
  ir::Node n = conv;
  n.inputs = {conv.inputs[0], w, b};
  n.outputs = {output};
  return n;
}

}  // namespace loom::transform
