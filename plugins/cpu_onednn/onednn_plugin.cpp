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
    for (size_t i = 0; i < in.nodes.size(); ++i)
      if (in.verdicts[i].role == OpRole::kUnsupported) sink.decline(in.ids[i], in.verdicts[i].reason);
    for (const std::vector<size_t>& group : group_supported_nodes(in)) {
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
    auto partition = std::make_unique<OnednnPartition>(PartitionSpec::from(g), engine_, options_);
    partition->build_at_compile(g);
    return partition;
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
