#include "pattern_fusion.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "eltwise_ops.h"
#include "ops/quant_params.h"
#include "pattern_matcher.h"

namespace loom::onednn {
namespace {

using dnnl::algorithm;


NodeSpec hardswish_node(const NodeSpec& first, size_t x_input, const NodeSpec& last, const char* pattern) {
  NodeSpec h;
  h.op_type = "HardSwish";
  h.opset = 14;
  h.name = last.name + " (" + pattern + ")";
  h.inputs = {first.inputs[x_input]};
  h.input_dtypes = {LOOM_DTYPE_FLOAT};
  h.input_shapes = {first.input_shapes[x_input]};
  h.input_is_constant = {false};
  h.outputs = {last.outputs[0]};
  h.output_dtypes = {LOOM_DTYPE_FLOAT};
  return h;
}

}  // namespace

void apply_rewrites(PartitionSpec& spec, std::map<size_t, NodeSpec>& replacement, const std::set<size_t>& removed) {
  if (removed.empty()) return;
  std::vector<NodeSpec> nodes;
  for (size_t i = 0; i < spec.nodes.size(); ++i) {
    auto r = replacement.find(i);
    if (r != replacement.end()) nodes.push_back(std::move(r->second));
    else if (!removed.count(i)) nodes.push_back(std::move(spec.nodes[i]));
  }
  spec.nodes = std::move(nodes);
}


void fuse_quantized_max_pool_patterns(PartitionSpec& spec) {
  std::map<size_t, NodeSpec> replacement;  // at the index of the pattern's last node
  std::set<size_t> removed;
  const Matcher m(spec);
  std::map<std::string, size_t> producer;
  for (size_t i = 0; i < spec.nodes.size(); ++i)
    for (const std::string& v : spec.nodes[i].outputs)
      if (!v.empty()) producer[v] = i;
  for (size_t p = 0; p < spec.nodes.size(); ++p) {
    const NodeSpec& pool = spec.nodes[p];
    if (!pool.is_onnx_op("MaxPool") || pool.inputs.empty() || pool.used_output_count() != 1 || pool.outputs[0].empty())
      continue;
    auto dq = producer.find(pool.inputs[0]);
    if (dq == producer.end() || !spec.nodes[dq->second].is_onnx_op("DequantizeLinear") ||
        m.sole_consumer(pool.inputs[0]) != p)
      continue;
    auto q = m.sole_consumer(pool.outputs[0]);
    if (!q || !spec.nodes[*q].is_onnx_op("QuantizeLinear") || spec.nodes[*q].inputs[0] != pool.outputs[0]) continue;
    const NodeSpec &d = spec.nodes[dq->second], &qn = spec.nodes[*q];
    const auto pd = scalar_quant_params(d), pq = scalar_quant_params(qn);
    if (!pd || !pq || *pd != *pq || d.input_dtypes[0] != qn.output_dtypes[0] ||
        (d.input_dtypes[0] != LOOM_DTYPE_UINT8 && d.input_dtypes[0] != LOOM_DTYPE_INT8))
      continue;
    if (removed.count(dq->second) || removed.count(p) || removed.count(*q)) continue;
    NodeSpec n = pool;
    n.name = pool.name + " (int8: DequantizeLinear -> MaxPool -> QuantizeLinear)";
    n.inputs[0] = d.inputs[0];
    n.input_dtypes[0] = d.input_dtypes[0];
    n.input_shapes[0] = d.input_shapes[0];
    n.input_is_constant[0] = false;
    n.outputs = {qn.outputs[0]};
    n.output_dtypes = {qn.output_dtypes[0]};
    replacement.emplace(*q, std::move(n));
    removed.insert({dq->second, p, *q});
  }
  apply_rewrites(spec, replacement, removed);
}

void fuse_hardswish_patterns(PartitionSpec& spec) {
  std::map<size_t, NodeSpec> replacement;  // at the index of the pattern's last node
  std::set<size_t> removed;
  {
    const Matcher m(spec);
    for (size_t i = 0; i < spec.nodes.size(); ++i) {
      if (removed.count(i)) continue;
      std::vector<size_t> nodes = m.hard_sigmoid_form(i);
      const char* pattern = "x * HardSigmoid(x)";
      size_t x_input = 0;
      if (nodes.empty()) {
        nodes = m.clip_form(i);
        pattern = "x * Clip(x + 3, 0, 6) / 6";
        // The Add's non-constant operand is x.
        x_input = !nodes.empty() && spec.nodes[i].input_is_constant[0] ? 1 : 0;
      }
      if (nodes.empty()) continue;
      bool overlaps = false;
      for (size_t k : nodes) overlaps |= removed.count(k) > 0;
      if (overlaps) continue;
      // The result node depends on all the others, so it comes last in the
      // (topological) node order; x is read by the first node, so the new
      // node can take the result node's position.
      const size_t last = nodes.back();
      replacement.emplace(last, hardswish_node(spec.nodes[i], x_input, spec.nodes[last], pattern));
      removed.insert(nodes.begin(), nodes.end());
    }
  }
  apply_rewrites(spec, replacement, removed);
}

}  // namespace loom::onednn
