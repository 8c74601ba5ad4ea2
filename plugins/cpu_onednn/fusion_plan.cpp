#include "fusion_plan.h"

#include <map>
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

}  // namespace

std::vector<BuildUnit> plan_fusion(const PartitionSpec& spec) {
  const std::set<std::string> outputs(spec.outputs.begin(), spec.outputs.end());
  std::map<std::string, std::vector<size_t>> consumers;
  for (size_t i = 0; i < spec.nodes.size(); ++i)
    for (const std::string& v : spec.nodes[i].inputs)
      if (!v.empty()) consumers[v].push_back(i);

  std::vector<bool> taken(spec.nodes.size(), false);
  std::vector<BuildUnit> units;
  for (size_t i = 0; i < spec.nodes.size(); ++i) {
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
