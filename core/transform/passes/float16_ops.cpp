#include "transform/passes/float16_ops.h"

#include <algorithm>
#include <map>
#include <utility>

namespace loom::transform {
namespace {

using Key = std::pair<std::string, std::string>;

std::map<Key, Float16OpRule> make_rules() {
  const std::vector<int> first{0}, all{kFloat16AllPositions};
  std::map<Key, Float16OpRule> r;
  auto add = [&](const std::string& domain, const std::vector<std::string>& ops, std::vector<int> in,
                 std::vector<int> out) {
    for (const std::string& op : ops) r[{domain, op}] = Float16OpRule{in, out};
  };
  // One T input, one T output.
  add("",
      {"Relu", "LeakyRelu", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "Elu", "Erf", "Neg", "Abs", "Sqrt",
       "Reciprocal", "Gelu", "Identity", "Softmax", "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool",
       "Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze", "Expand", "Tile", "Slice", "Gather",
       "DepthToSpace", "SpaceToDepth", "Dropout"},
      first, first);
  add("com.microsoft", {"QuickGelu"}, first, first);
  // Every input and the output.
  add("", {"Add", "Sub", "Mul", "Div", "PRelu", "Sum", "Concat", "MatMul", "Gemm", "Conv", "ConvTranspose", "Clip",
           "BatchNormalization", "LayerNormalization", "InstanceNormalization"},
      all, first);
  add("com.microsoft", {"FusedConv", "FusedGemm", "FusedMatMul", "Gelu", "FastGelu", "BiasGelu"}, all, first);
  // Split's outputs, Where's branches, Pad's constant value.
  add("", {"Split"}, first, all);
  add("", {"Where"}, {1, 2}, first);
  add("", {"Pad"}, {0, 2}, first);
  // input, skip, gamma, beta, bias -> output and the input + skip + bias sum
  // (its mean / inverse deviation outputs are float and stay so).
  add("com.microsoft", {"SkipLayerNormalization", "SkipSimplifiedLayerNormalization"}, {0, 1, 2, 3, 4}, {0, 3});
  // input, weights, bias, past, relative position bias -> output, present
  // (the mask and lengths are integers).
  add("com.microsoft", {"Attention"}, {0, 1, 2, 4, 5}, {0, 1});
  // The embedding tables, gamma and beta -> the output and the embedding
  // sum (ids, segment ids and the mask index are integers).
  add("com.microsoft", {"EmbedLayerNormalization"}, {2, 3, 4, 5, 6}, {0, 2});
  return r;
}

}  // namespace

const Float16OpRule* float16_rule(const std::string& domain, const std::string& op) {
  static const std::map<Key, Float16OpRule> kRules = make_rules();
  auto it = kRules.find({domain, op});
  return it == kRules.end() ? nullptr : &it->second;
}

bool float16_position(const std::vector<int>& positions, size_t index) {
  if (positions.size() == 1 && positions[0] == kFloat16AllPositions) return true;
  return std::find(positions.begin(), positions.end(), static_cast<int>(index)) != positions.end();
}

}  // namespace loom::transform
