// Reading the node patterns inside a claimed partition (pattern_fusion.h's
// rewrites): who produces and reads each value, and the written-out forms
// of HardSwish, GELU and LayerNorm that exporters emit. Read-only over a
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

// A LayerNorm written out, found by Matcher::layer_norm_form.
struct LayerNormMatch {
  struct Param {
    std::string name;
    std::optional<std::vector<int64_t>> shape;
    std::vector<int64_t> constant_shape;
  };
  std::vector<size_t> nodes;  // empty: no match
  double epsilon = 0;
  std::string x;
  std::optional<std::vector<int64_t>> x_shape;
  std::optional<Param> gamma, beta;
};

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

  // Nodes of x * 0.5 * (1 + Erf(x / sqrt(2))) around the Erf `erf`, the
  // last one producing the result, and x's input index in the first node
  // (the Div / Mul feeding Erf); empty when the pattern does not match.
  // Forms torch emits: x / sqrt(2) or x * (1 / sqrt(2)); then
  // (x * (1 + e)) * 0.5, x * ((1 + e) * 0.5), or (x * 0.5) * (1 + e);
  // commutative operands either way round.
  std::vector<size_t> gelu_form(size_t erf, size_t& x_input) const {
    const NodeSpec& e = spec_.nodes[erf];
    if (!e.is_onnx_op("Erf") || e.inputs.size() != 1 ||
        e.outputs.size() != 1 || e.input_dtypes[0] != LOOM_DTYPE_FLOAT)
      return {};
    auto d = producer(e.inputs[0]);
    if (!d || sole_consumer(e.inputs[0]) != erf) return {};
    const NodeSpec& dn = spec_.nodes[*d];
    if (dn.inputs.size() != 2) return {};
    constexpr double kSqrt2 = 1.4142135623730951;
    std::string x;
    for (size_t k = 0; k < 2 && x.empty(); ++k) {
      const std::string& v = dn.inputs[k];
      if (v.empty() || dn.input_is_constant[k] || dn.input_dtypes[k] != LOOM_DTYPE_FLOAT) continue;
      if (is_op_with_constant(*d, algorithm::binary_div, v, kSqrt2) ||
          is_op_with_constant(*d, algorithm::binary_mul, v, 1.0 / kSqrt2)) {
        x = v;
        x_input = k;
      }
    }
    if (x.empty()) return {};
    auto a = sole_consumer(e.outputs[0]);
    if (!a || !is_op_with_constant(*a, algorithm::binary_add, e.outputs[0], 1.0)) return {};
    const std::string& av = spec_.nodes[*a].outputs[0];
    auto m1 = sole_consumer(av);
    if (!m1) return {};
    const std::string& mv = spec_.nodes[*m1].outputs[0];
    if (is_mul_by(*m1, av, x) || is_op_with_constant(*m1, algorithm::binary_mul, av, 0.5)) {
      // (x * (1 + e)) * 0.5 or x * ((1 + e) * 0.5).
      auto m2 = sole_consumer(mv);
      if (!m2) return {};
      const bool half_last = is_mul_by(*m1, av, x) && is_op_with_constant(*m2, algorithm::binary_mul, mv, 0.5);
      const bool x_last = !is_mul_by(*m1, av, x) && is_mul_by(*m2, mv, x);
      if (half_last || x_last) return {*d, erf, *a, *m1, *m2};
      return {};
    }
    // (x * 0.5) * (1 + e): the other operand of m1 is Mul(x, 0.5) read only there.
    const NodeSpec& m = spec_.nodes[*m1];
    auto mul_alg = binary_algorithm_for(m);
    if (!mul_alg || *mul_alg != algorithm::binary_mul || m.outputs.size() != 1) return {};
    const std::string& h = m.inputs[0] == av ? m.inputs[1] : m.inputs[0];
    auto hn = producer(h);
    if (!hn || *hn == *d || sole_consumer(h) != m1 || !is_op_with_constant(*hn, algorithm::binary_mul, x, 0.5))
      return {};
    return {*d, *hn, erf, *a, *m1};
  }

  // Every node reading `value` (empty for a partition output).
  std::vector<size_t> consumers_of(const std::string& value) const {
    if (outputs_.count(value)) return {};
    auto it = consumers_.find(value);
    return it == consumers_.end() ? std::vector<size_t>{} : it->second;
  }

  // LayerNorm over the last axis written out as exporters emit it, starting
  // at the ReduceMean `rm` computing m = mean(x):
  //   d = x - m; y = d / Sqrt(mean(Pow(d, 2)) + eps)   (or d * Reciprocal(...))
  //   then optionally y * gamma and (y * gamma) + beta, gamma / beta constants
  //   of shape [C], C = x's (known) last dim.
  // Empty when the pattern does not match.
  LayerNormMatch layer_norm_form(size_t rm) const {
    LayerNormMatch out;
    const NodeSpec& r0 = spec_.nodes[rm];
    if (!is_last_axis_mean(r0)) return {};
    const std::string& x = r0.inputs[0];
    const auto m = sole_consumer(r0.outputs[0]);
    if (!m || !is_binary(*m, algorithm::binary_sub) || spec_.nodes[*m].inputs[0] != x ||
        spec_.nodes[*m].inputs[1] != r0.outputs[0])
      return {};
    const std::string& d = spec_.nodes[*m].outputs[0];
    const std::vector<size_t> readers = consumers_of(d);
    if (readers.size() != 2) return {};
    // d feeds exactly Pow(d, 2) and the Div / Mul making y.
    const size_t pow = spec_.nodes[readers[0]].op_type == "Pow" ? readers[0] : readers[1];
    const size_t use = pow == readers[0] ? readers[1] : readers[0];
    const NodeSpec& pn = spec_.nodes[pow];
    if (!pn.is_onnx_op("Pow") || pn.inputs.size() != 2 ||
        pn.inputs[0] != d || pn.outputs.size() != 1 || !is_scalar_constant(pn, 1, 2.0))
      return {};
    const auto r1 = sole_consumer(pn.outputs[0]);
    if (!r1 || !is_last_axis_mean(spec_.nodes[*r1]) || spec_.nodes[*r1].inputs[0] != pn.outputs[0]) return {};
    const std::string& v = spec_.nodes[*r1].outputs[0];
    const auto add = sole_consumer(v);
    if (!add || !is_binary(*add, algorithm::binary_add)) return {};
    const NodeSpec& an = spec_.nodes[*add];
    const size_t eps_input = an.inputs[0] == v ? 1 : 0;
    if (an.inputs[1 - eps_input] != v) return {};
    auto eps = an.small_constants.find(eps_input);
    if (eps == an.small_constants.end() || eps->second.size() != 1 || !(eps->second[0] >= 0.0)) return {};
    auto eps_shape = an.constant_shapes.find(eps_input);
    if (eps_shape != an.constant_shapes.end() && eps_shape->second.size() > 1) return {};
    const auto sq = sole_consumer(an.outputs[0]);
    if (!sq) return {};
    const NodeSpec& sn = spec_.nodes[*sq];
    if (!sn.is_onnx_op("Sqrt") || sn.inputs.size() != 1 ||
        sn.outputs.size() != 1)
      return {};
    const std::string& s = sn.outputs[0];
    const auto next = sole_consumer(s);
    if (!next) return {};
    out.nodes = {rm, *m, pow, *r1, *add, *sq};
    size_t y_node;
    if (is_binary(use, algorithm::binary_div) && spec_.nodes[use].inputs[0] == d && spec_.nodes[use].inputs[1] == s &&
        *next == use) {
      y_node = use;
    } else {
      // d * Reciprocal(s), either order.
      const NodeSpec& rc = spec_.nodes[*next];
      if (!rc.is_onnx_op("Reciprocal") || rc.inputs.size() != 1 ||
          rc.outputs.size() != 1 || sole_consumer(rc.outputs[0]) != use || !is_mul_by(use, rc.outputs[0], d))
        return {};
      out.nodes.push_back(*next);
      y_node = use;
    }
    out.nodes.push_back(y_node);
    out.epsilon = eps->second[0];
    out.x = x;
    out.x_shape = r0.input_shapes[0];
    // Optional affine part: constants of shape [C] with C = x's last dim.
    const auto& xs = r0.input_shapes[0];
    const int64_t c = xs && !xs->empty() ? xs->back() : -1;
    std::string last = spec_.nodes[y_node].outputs[0];
    if (c <= 0) return out;
    const auto mul = sole_consumer(last);
    if (!mul || !is_binary(*mul, algorithm::binary_mul)) return out;
    const auto gamma = vector_operand(*mul, last, c);
    if (gamma < 0) return out;
    out.nodes.push_back(*mul);
    out.gamma = gamma_like(*mul, gamma);
    last = spec_.nodes[*mul].outputs[0];
    const auto badd = sole_consumer(last);
    if (!badd || !is_binary(*badd, algorithm::binary_add)) return out;
    const auto beta = vector_operand(*badd, last, c);
    if (beta < 0) return out;
    out.nodes.push_back(*badd);
    out.beta = gamma_like(*badd, beta);
    return out;
  }

 private:
  std::optional<size_t> producer(const std::string& value) const {
    auto it = producer_.find(value);
    if (it == producer_.end()) return std::nullopt;
    return it->second;
  }

  bool is_binary(size_t node, algorithm alg) const {
    const NodeSpec& n = spec_.nodes[node];
    auto a = binary_algorithm_for(n);
    return a && *a == alg && n.inputs.size() == 2 && n.outputs.size() == 1 && n.input_dtypes[0] == LOOM_DTYPE_FLOAT &&
           n.input_dtypes[1] == LOOM_DTYPE_FLOAT;
  }

  static bool is_scalar_constant(const NodeSpec& n, size_t input, double want) {
    auto c = n.small_constants.find(input);
    if (c == n.small_constants.end() || c->second.size() != 1 || c->second[0] != want) return false;
    auto shape = n.constant_shapes.find(input);
    return shape == n.constant_shapes.end() || shape->second.size() <= 1;
  }

  // ReduceMean(x) over the last axis only, keepdims, float32, with x's rank
  // known when the axis is given as a non-negative index. Axes are an
  // attribute before opset 18 and a constant input from 18 on.
  static bool is_last_axis_mean(const NodeSpec& n) {
    if (!n.is_onnx_op("ReduceMean") || n.inputs.empty() ||
        n.outputs.size() != 1 || n.input_dtypes[0] != LOOM_DTYPE_FLOAT)
      return false;
    if (n.attr_int("keepdims", 1) != 1) return false;
    std::vector<double> axes;
    if (n.opset < 18) {
      if (n.inputs.size() != 1) return false;
      for (int64_t a : n.attr_ints("axes")) axes.push_back(static_cast<double>(a));
    } else {
      if (n.inputs.size() != 2) return false;
      auto it = n.small_constants.find(1);
      if (it == n.small_constants.end()) return false;
      axes = it->second;
    }
    if (axes.size() != 1) return false;
    if (axes[0] == -1) return true;
    const auto rank = n.input_rank(0);
    return rank && *rank >= 1 && axes[0] == static_cast<double>(*rank - 1);
  }

  // Index of the operand of binary `node` other than `value` when it is a
  // float constant of shape [c]; -1 otherwise.
  int vector_operand(size_t node, const std::string& value, int64_t c) const {
    const NodeSpec& n = spec_.nodes[node];
    const size_t k = n.inputs[0] == value ? 1 : 0;
    if (n.inputs[1 - k] != value || n.inputs[k] == value || !n.input_is_constant[k]) return -1;
    auto shape = n.constant_shapes.find(k);
    if (shape == n.constant_shapes.end() || shape->second != std::vector<int64_t>{c}) return -1;
    return static_cast<int>(k);
  }

  LayerNormMatch::Param gamma_like(size_t node, int k) const {
    const NodeSpec& n = spec_.nodes[node];
    return {n.inputs[k], n.input_shapes[k], n.constant_shapes.at(k)};
  }

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
