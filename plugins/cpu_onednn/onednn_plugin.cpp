// The cpu_onednn EP: claims large acyclic sets of float32 nodes, and of
// int8 QLinearConv / QLinearMatMul / QuantizeLinear / DequantizeLinear /
// com.microsoft MatMulIntegerToFloat nodes, it can run with oneDNN primitives (see op_support.h) and compiles each set into a
// shape-specialised program (see compiled_partition.h). What it does not
// claim goes to the next provider in the priority list.
#include <memory>
#include <set>
#include <sstream>

#include "compiled_partition.h"
#include "ep_options.h"
#include "loom/sdk.h"
#include "node_spec.h"
#include "partition_grouping.h"
#include "pattern_fusion.h"

namespace loom::onednn {
namespace {

constexpr char kProvider[] = "cpu_onednn";

class OnednnEp : public sdk::Ep {
 public:
  explicit OnednnEp(EpOptions options) : engine_(dnnl::engine::kind::cpu, 0), options_(options) {}

  bool has_capability() const override { return true; }

  void claim(const sdk::Graph& g, sdk::ClaimSink& sink) override {
    GroupingInput in;
    for (size_t i = 0; i < g.node_count(); ++i) {
      sdk::Node node = g.node(i);
      in.nodes.push_back(NodeSpec::from(node));
      in.ids.push_back(node.id());
      in.verdicts.push_back(check_support(in.nodes.back()));
    }
    // Erf, ReduceMean and Reciprocal have no oneDNN primitive here: each is claimed only
    // as part of a whole pattern (GELU; LayerNorm written out) whose other
    // nodes are claimed too; compile() rewrites the pattern into one node
    // (eltwise_gelu_erf; layer_normalization).
    std::map<size_t, const std::vector<size_t>*> pattern_of;  // pattern-only node -> its pattern
    PartitionSpec whole;
    whole.nodes = in.nodes;
    for (size_t i = 0; i < g.output_count(); ++i) whole.outputs.emplace_back(g.output_name(i));
    const std::vector<std::vector<size_t>> gelus = find_gelu_patterns(whole);
    const std::vector<std::vector<size_t>> layer_norms = find_layer_norm_patterns(whole);
    for (size_t i = 0; i < in.nodes.size(); ++i)
      if (in.nodes[i].op_type == "ReduceMean" && in.verdicts[i].role == OpRole::kUnsupported)
        in.verdicts[i].reason = "ReduceMean is claimed only inside a LayerNorm pattern over the last axis";
    auto claim_pattern = [&](const std::vector<size_t>& p, const std::set<std::string>& pattern_only, OpRole role,
                             const char* what) {
      bool others_claimed = true;
      for (size_t k : p)
        if (!pattern_only.count(in.nodes[k].op_type)) others_claimed &= in.verdicts[k].role != OpRole::kUnsupported;
      for (size_t k : p) {
        if (!pattern_only.count(in.nodes[k].op_type) || in.verdicts[k].role != OpRole::kUnsupported) continue;
        if (!others_claimed) {
          in.verdicts[k].reason = std::string("part of a ") + what + " pattern whose other nodes are not all claimed";
          continue;
        }
        in.verdicts[k] = {role, {}};
        pattern_of[k] = &p;
      }
    };
    for (const std::vector<size_t>& p : gelus) claim_pattern(p, {"Erf"}, OpRole::kUnary, "GELU");
    for (const std::vector<size_t>& p : layer_norms) claim_pattern(p, {"ReduceMean", "Reciprocal"}, OpRole::kCompute, "LayerNorm");
    for (size_t i = 0; i < in.nodes.size(); ++i)
      if (in.verdicts[i].role == OpRole::kUnsupported) sink.decline(in.ids[i], in.verdicts[i].reason);
    for (const std::vector<size_t>& group : group_supported_nodes(in)) {
      // A group holding an Erf / ReduceMean without the rest of its pattern
      // could not be compiled: leave the whole group to the next provider.
      const std::set<size_t> members(group.begin(), group.end());
      bool whole_patterns = true;
      for (size_t i : group) {
        auto it = pattern_of.find(i);
        if (it == pattern_of.end()) continue;
        for (size_t k : *it->second) whole_patterns &= members.count(k) > 0;
      }
      if (!whole_patterns) {
        for (size_t i : group) sink.decline(in.ids[i], "its partition would split a GELU or LayerNorm pattern");
        continue;
      }
      std::vector<uint64_t> ids;
      std::map<std::string, int> ops;
      for (size_t i : group) {
        ids.push_back(in.ids[i]);
        ++ops[in.nodes[i].op_type];
      }
      std::ostringstream reason;
      reason << "oneDNN partition of " << group.size() << " node(s):";
      for (const auto& [op, count] : ops) reason << ' ' << op << 'x' << count;
      sink.claim_fused(ids, reason.str());
    }
  }

  std::unique_ptr<sdk::CompiledPartition> compile(const sdk::Graph& g) override {
    return std::make_unique<OnednnPartition>(PartitionSpec::from(g), engine_, options_);
  }

 private:
  dnnl::engine engine_;
  EpOptions options_;
};

class OnednnFactory : public sdk::EpFactory {
 public:
  OnednnFactory() : EpFactory(kProvider) {}
  std::unique_ptr<sdk::Ep> create_ep(size_t, const sdk::Options& options) override {
    return std::make_unique<OnednnEp>(parse_ep_options(options));
  }
};

std::unique_ptr<sdk::Plugin> create_plugin() {
  auto p = std::make_unique<sdk::Plugin>();
  p->add_factory(std::make_unique<OnednnFactory>());
  return p;
}

}  // namespace
}  // namespace loom::onednn

LOOM_SDK_DEFINE_PLUGIN("cpu_onednn", "0.1.0", loom::onednn::create_plugin)
