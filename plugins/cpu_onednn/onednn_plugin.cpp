// The cpu_onednn EP: claims large acyclic sets of float32 nodes it can run
// with oneDNN primitives (see op_support.h) and compiles each set into a
// shape-specialised program (see compiled_partition.h). What it does not
// claim goes to the next provider in the priority list.
#include <omp.h>

#include <memory>
#include <set>
#include <sstream>

#include "compiled_partition.h"
#include "loom/sdk.h"
#include "node_spec.h"
#include "partition_grouping.h"
#include "pattern_fusion.h"

namespace loom::onednn {
namespace {

constexpr char kProvider[] = "cpu_onednn";

int threads_from(const sdk::Options& options) {
  for (const auto& [key, value] : options) {
    if (key != "intra_op_threads") continue;
    try {
      size_t used = 0;
      const int n = std::stoi(value, &used);
      if (used != value.size() || n < 0) throw std::invalid_argument(value);
      if (n > 0) return n;
    } catch (const std::exception&) {
      throw sdk::Error(std::string(kProvider) + ": option intra_op_threads must be a non-negative integer, got '" +
                           value + "'",
                       LOOM_STATUS_INVALID_ARGUMENT);
    }
  }
  return omp_get_num_procs();
}

class OnednnEp : public sdk::Ep {
 public:
  explicit OnednnEp(int threads) : engine_(dnnl::engine::kind::cpu, 0), threads_(threads) {}

  bool has_capability() const override { return true; }

  void claim(const sdk::Graph& g, sdk::ClaimSink& sink) override {
    GroupingInput in;
    for (size_t i = 0; i < g.node_count(); ++i) {
      sdk::Node node = g.node(i);
      in.nodes.push_back(NodeSpec::from(node));
      in.ids.push_back(node.id());
      in.verdicts.push_back(check_support(in.nodes.back()));
    }
    // Erf has no oneDNN algorithm of its own: it is claimed only as part of
    // a whole GELU pattern whose other nodes are claimed too (compile()
    // rewrites the pattern into one eltwise_gelu_erf).
    std::map<size_t, const std::vector<size_t>*> gelu_of;  // Erf node -> its pattern
    PartitionSpec whole;
    whole.nodes = in.nodes;
    for (size_t i = 0; i < g.output_count(); ++i) whole.outputs.emplace_back(g.output_name(i));
    const std::vector<std::vector<size_t>> gelus = find_gelu_patterns(whole);
    for (const std::vector<size_t>& p : gelus) {
      bool others_claimed = true;
      size_t erf = 0;
      for (size_t k : p) {
        if (in.nodes[k].op_type == "Erf") erf = k;
        else others_claimed &= in.verdicts[k].role != OpRole::kUnsupported;
      }
      if (!others_claimed) {
        in.verdicts[erf].reason = "part of a GELU pattern whose other nodes are not all claimed";
        continue;
      }
      in.verdicts[erf] = {OpRole::kUnary, {}};
      gelu_of[erf] = &p;
    }
    for (size_t i = 0; i < in.nodes.size(); ++i)
      if (in.verdicts[i].role == OpRole::kUnsupported) sink.decline(in.ids[i], in.verdicts[i].reason);
    for (const std::vector<size_t>& group : group_supported_nodes(in)) {
      // A group holding an Erf without the rest of its GELU pattern could
      // not be compiled: leave the whole group to the next provider.
      const std::set<size_t> members(group.begin(), group.end());
      bool whole_patterns = true;
      for (size_t i : group) {
        auto it = gelu_of.find(i);
        if (it == gelu_of.end()) continue;
        for (size_t k : *it->second) whole_patterns &= members.count(k) > 0;
      }
      if (!whole_patterns) {
        for (size_t i : group) sink.decline(in.ids[i], "its partition would split a GELU pattern");
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
    return std::make_unique<OnednnPartition>(PartitionSpec::from(g), engine_, threads_);
  }

 private:
  dnnl::engine engine_;
  int threads_;
};

class OnednnFactory : public sdk::EpFactory {
 public:
  OnednnFactory() : EpFactory(kProvider) {}
  std::unique_ptr<sdk::Ep> create_ep(size_t, const sdk::Options& options) override {
    return std::make_unique<OnednnEp>(threads_from(options));
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

// Counters for tests: programs built (one per partition and input-shape
// tuple) and partition computes, since the plugin was loaded.
LOOM_EXPORT uint64_t loom_cpu_onednn_programs_built() { return loom::onednn::counters().programs_built.load(); }
LOOM_EXPORT uint64_t loom_cpu_onednn_partition_runs() { return loom::onednn::counters().partition_runs.load(); }
