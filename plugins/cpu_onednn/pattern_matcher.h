// Reading the node patterns inside a claimed partition (pattern_fusion.h's
// rewrites): who produces and reads each value, and the written-out forms
// of HardSwish that exporters emit. Read-only over a
// PartitionSpec that must outlive the Matcher.
#pragma once

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "eltwise_ops.h"
#include "partition_spec.h"

namespace loom::onednn {

using dnnl::algorithm;

class Matcher {
 public:
  explicit Matcher(const PartitionSpec& spec) : spec_(spec), outputs_(spec.outputs.begin(), spec.outputs.end()) {
    for (size_t i = 0; i < spec.nodes.size(); ++i) {
      for (const std::string& v : spec.nodes[i].inputs)
        if (!v.empty()) consumers_[v].push_back(i);
      for (const std::string& v : spec.nodes[i].outputs)
        if (!v.empty()) producer_[v] = i;
    }
  }

  // The only node reading `value`, when it is read once and is internal.
  std::optional<size_t> sole_consumer(const std::string& value) const {
    if (outputs_.count(value)) return std::nullopt;
    auto it = consumers_.find(value);
    if (it == consumers_.end() || it->second.size() != 1) return std::nullopt;
    return it->second[0];
  }

  // For a binary node `alg`(value, constant) (either order when
  // commutative), the constant when it is one element equal to `want` whose
  // rank does not exceed the other operand's (so the result keeps its shape).
  bool is_op_with_constant(size_t node, algorithm alg, const std::string& value, double want) const {
    const NodeSpec& n = spec_.nodes[node];
    auto a = binary_algorithm_for(n);
    if (!a || *a != alg || n.outputs.size() != 1) return false;
    size_t k;
    if (n.inputs[0] == value) k = 1;
    else if (n.inputs[1] == value && is_commutative(alg)) k = 0;
    else return false;
    auto c = n.small_constants.find(k);
    if (c == n.small_constants.end() || c->second.size() != 1) return false;
    if (std::fabs(c->second[0] - want) > 1e-6 * std::max(1.0, std::fabs(want))) return false;
    const auto value_rank = n.input_rank(1 - k);
    auto shape = n.constant_shapes.find(k);
    const size_t const_rank = shape == n.constant_shapes.end() ? 0 : shape->second.size();
    return const_rank <= 1 || (value_rank && const_rank <= *value_rank);
  }

  // Mul(x, value) or Mul(value, x).
  bool is_mul_by(size_t node, const std::string& value, const std::string& x) const {
    const NodeSpec& n = spec_.nodes[node];
    auto a = binary_algorithm_for(n);
    if (!a || *a != algorithm::binary_mul || n.outputs.size() != 1) return false;
    return (n.inputs[0] == value && n.inputs[1] == x) || (n.inputs[1] == value && n.inputs[0] == x);
  }

  // Div(value, 6) or Mul(value, 1/6).
  bool is_sixth_of(size_t node, const std::string& value) const {
    return is_op_with_constant(node, algorithm::binary_div, value, 6.0) ||
           is_op_with_constant(node, algorithm::binary_mul, value, 1.0 / 6.0);
  }

  // Nodes of x * Clip(x + 3, 0, 6) / 6 starting at the Add `add`, the last
  // one producing the result; empty when the pattern does not match.
  std::vector<size_t> clip_form(size_t add) const {
    const NodeSpec& n = spec_.nodes[add];
    if (n.inputs.size() != 2 || n.outputs.size() != 1) return {};
    for (size_t xi = 0; xi < 2; ++xi) {
      const std::string& x = n.inputs[xi];
      if (x.empty() || n.input_is_constant[xi] || n.input_dtypes[xi] != LOOM_DTYPE_FLOAT) continue;
      if (!is_op_with_constant(add, algorithm::binary_add, x, 3.0)) continue;
      auto clip = sole_consumer(n.outputs[0]);
      if (!clip || !is_clip_0_6(*clip, n.outputs[0])) continue;
      const std::string& c = spec_.nodes[*clip].outputs[0];
      auto next = sole_consumer(c);
      if (!next) continue;
      const std::string& m = spec_.nodes[*next].outputs[0];
      auto last = sole_consumer(m);
      if (!last) continue;
      if (is_mul_by(*next, c, x) && is_sixth_of(*last, m)) return {add, *clip, *next, *last};
      if (is_sixth_of(*next, c) && is_mul_by(*last, m, x)) return {add, *clip, *next, *last};
    }
    return {};
  }

  // Nodes of x * HardSigmoid(x) (alpha 1/6, beta 1/2) starting at `hs`.
  std::vector<size_t> hard_sigmoid_form(size_t hs) const {
    const NodeSpec& n = spec_.nodes[hs];
    if (!n.is_onnx_op("HardSigmoid") || n.inputs.size() != 1 ||
        n.outputs.size() != 1 || n.input_dtypes[0] != LOOM_DTYPE_FLOAT)
      return {};
    if (std::fabs(n.attr_float("alpha", 0.2f) - 1.f / 6.f) > 1e-6f || std::fabs(n.attr_float("beta", 0.5f) - 0.5f) > 1e-6f)
      return {};
    auto mul = sole_consumer(n.outputs[0]);
    if (!mul || !is_mul_by(*mul, n.outputs[0], n.inputs[0])) return {};
    return {hs, *mul};
  }

 private:
  bool is_clip_0_6(size_t node, const std::string& value) const {
    const NodeSpec& n = spec_.nodes[node];
    if (n.op_type != "Clip" || n.inputs.empty() || n.inputs[0] != value || n.outputs.size() != 1) return false;
    auto steps = eltwise_steps_for(n);
    return steps && steps->size() == 1 && (*steps)[0].alg == algorithm::eltwise_clip && (*steps)[0].alpha == 0.f &&
           (*steps)[0].beta == 6.f;
  }

  const PartitionSpec& spec_;
  std::set<std::string> outputs_;
  std::map<std::string, std::vector<size_t>> consumers_;
  std::map<std::string, size_t> producer_;
};

}  // namespace loom::onednn
