#include "fusion_plan.h"

#include <map>
#include <optional>
#include <set>

#include "eltwise_ops.h"
#include "op_support.h"

namespace loom::onednn {
namespace {

bool takes_post_ops(const NodeSpec& n) {
  const OpRole r = check_support(n).role;
  return r == OpRole::kAnchor || r == OpRole::kBinary;
}

// Whether `consumer` can absorb `value` as a post-op of what produced it.
bool joins_chain(const NodeSpec& consumer, const std::string& value) {
  if (eltwise_steps_for(consumer)) return consumer.inputs.size() >= 1 && consumer.inputs[0] == value;
  // BiasGelu / FastGelu(bias): an add (commutative) then eltwise steps.
  auto alg = bias_activation_for(consumer) ? std::optional<dnnl::algorithm>(dnnl::algorithm::binary_add)
                                           : binary_algorithm_for(consumer);
  if (!alg || consumer.inputs[0] == consumer.inputs[1]) return false;
  if (consumer.inputs[0] == value) return true;
  return consumer.inputs[1] == value && is_commutative(*alg);
}

// See plan_fusion's contract (quantized residuals): anchor -> chain.
std::map<size_t, std::vector<size_t>> plan_quantized_residuals(
    const PartitionSpec& spec, const std::set<std::string>& outputs,
    const std::map<std::string, std::vector<size_t>>& consumers, std::vector<bool>& taken) {
  std::map<std::string, size_t> producer;
  for (size_t i = 0; i < spec.nodes.size(); ++i)
    for (const std::string& v : spec.nodes[i].outputs)
      if (!v.empty()) producer[v] = i;
  // The only reader of an internal value.
  auto sole_consumer = [&](const std::string& v) -> std::optional<size_t> {
    if (v.empty() || outputs.count(v)) return std::nullopt;
    auto it = consumers.find(v);
    if (it == consumers.end() || it->second.size() != 1) return std::nullopt;
    return it->second[0];
  };
  auto producer_of = [&](const std::string& v) -> std::optional<size_t> {
    auto it = producer.find(v);
    if (it == producer.end()) return std::nullopt;
    return it->second;
  };
  std::map<size_t, std::vector<size_t>> chains;
  for (size_t add = 0; add < spec.nodes.size(); ++add) {
    const NodeSpec& a = spec.nodes[add];
    if (!a.is_onnx_op("Add") || a.inputs.size() != 2 || a.outputs.size() != 1 || a.inputs[0] == a.inputs[1])
      continue;
    // Add -> [Relu] -> QuantizeLinear.
    std::vector<size_t> tail = {add};
    auto next = sole_consumer(a.outputs[0]);
    if (next && spec.nodes[*next].is_onnx_op("Relu") && spec.nodes[*next].outputs.size() == 1) {
      tail.push_back(*next);
      next = sole_consumer(spec.nodes[*next].outputs[0]);
    }
    if (!next || !spec.nodes[*next].is_onnx_op("QuantizeLinear") ||
        spec.nodes[*next].inputs[0] != spec.nodes[tail.back()].outputs[0])
      continue;
    tail.push_back(*next);
    // Both operands: DequantizeLinear read only here.
    size_t dq[2];
    bool ok = true;
    for (size_t k = 0; k < 2 && ok; ++k) {
      auto p = producer_of(a.inputs[k]);
      ok = p && spec.nodes[*p].is_onnx_op("DequantizeLinear") && sole_consumer(a.inputs[k]) == add && !taken[*p];
      if (ok) dq[k] = *p;
    }
    if (!ok) continue;
    // The anchor: a QLinearConv whose output only that DQ reads; the later one.
    std::optional<size_t> anchor, anchor_dq, other_dq;
    for (size_t k = 0; k < 2; ++k) {
      const std::string& y = spec.nodes[dq[k]].inputs[0];
      auto c = producer_of(y);
      if (!c || !spec.nodes[*c].is_onnx_op("QLinearConv") || spec.nodes[*c].outputs.size() != 1 || taken[*c] ||
          chains.count(*c) || sole_consumer(y) != dq[k])
        continue;
      if (!anchor || *c > *anchor) {
        anchor = *c;
        anchor_dq = dq[k];
        other_dq = dq[1 - k];
      }
    }
    if (!anchor) continue;
    bool free = true;
    for (size_t t : tail) free &= !taken[t];
    if (!free) continue;
    std::vector<size_t> chain = {*anchor_dq, *other_dq};
    chain.insert(chain.end(), tail.begin(), tail.end());
    taken[*anchor] = true;
    for (size_t c : chain) taken[c] = true;
    chains[*anchor] = std::move(chain);
  }
  return chains;
}

}  // namespace

std::vector<BuildUnit> plan_fusion(const PartitionSpec& spec) {
  const std::set<std::string> outputs(spec.outputs.begin(), spec.outputs.end());
  std::map<std::string, std::vector<size_t>> consumers;
  for (size_t i = 0; i < spec.nodes.size(); ++i)
    for (const std::string& v : spec.nodes[i].inputs)
      if (!v.empty()) consumers[v].push_back(i);

  std::vector<bool> taken(spec.nodes.size(), false);
  const std::map<size_t, std::vector<size_t>> residuals = plan_quantized_residuals(spec, outputs, consumers, taken);
  std::vector<BuildUnit> units;
  for (size_t i = 0; i < spec.nodes.size(); ++i) {
    if (auto r = residuals.find(i); r != residuals.end()) {
      units.push_back(BuildUnit{i, r->second});
      continue;
    }
    if (taken[i]) continue;
    taken[i] = true;
    BuildUnit unit{i, {}};
    const NodeSpec& n = spec.nodes[i];
    if (takes_post_ops(n) && n.outputs.size() == 1) {
      std::string value = n.outputs[0];
      for (;;) {
        if (outputs.count(value)) break;
        auto it = consumers.find(value);
        if (it == consumers.end() || it->second.size() != 1) break;
        const size_t c = it->second[0];
        const NodeSpec& next = spec.nodes[c];
        if (taken[c] || next.outputs.size() != 1 || !joins_chain(next, value)) break;
        taken[c] = true;
        unit.chain.push_back(c);
        value = next.outputs[0];
      }
    }
    units.push_back(std::move(unit));
  }
  return units;
}

}  // namespace loom::onednn
