// Whether an extended-level fusion may replace nodes by a fused op: only
// when the EP that would run those nodes also runs the fused op, so that a
// fusion never moves work from a fast EP to a slower one (say, a CUDA EP
// without Attention to the reference EP). The nodes' EP comes from a trial
// partition of the graph made on the first question (after the basic
// passes); "runs the fused op" from a trial partition of a one-node graph
// holding the fused node, offered to that EP alone.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "partition/partitioner.h"

namespace loom::session {

class FusionGate {
 public:
  // `in` without a graph: the EPs, priorities and fallback of the session.
  explicit FusionGate(partition::PartitionInputs in) : in_(std::move(in)) {}

  // See transform::PassContext::accept_fusion.
  bool accept(const ir::Graph& graph, const std::vector<ir::NodeId>& replaced, const ir::Node& fused,
              const std::map<std::string, ir::ValueType>& staged,
              const std::map<std::string, Tensor>& staged_initializers = {});
  // Whether `candidate` (a float16 node's float32 version:
  // transform::compute_float16_in_float32) should replace the `replaced`
  // nodes: they would not run on the first-priority provider, and a provider
  // of higher priority, or their own, runs the candidate (in float32 the
  // fusions that put work on the faster provider apply again). False when
  // nothing is placed.
  bool moves_up(const ir::Graph& graph, const std::vector<ir::NodeId>& replaced, const ir::Node& candidate,
                const std::map<std::string, ir::ValueType>& staged,
                const std::map<std::string, Tensor>& staged_initializers = {});
  // The layout phase's question (transform/passes/channels_last.h): whether
  // `candidate` should replace `replaced`: only when their placement is
  // known and that provider runs it (a provider claims a layout variant only
  // where it prefers it). Unlike accept, false when nothing is placed.
  bool prefers(const ir::Graph& graph, const std::vector<ir::NodeId>& replaced, const ir::Node& candidate,
               const std::map<std::string, ir::ValueType>& staged,
               const std::map<std::string, Tensor>& staged_initializers = {});

 private:
  void place_current(const ir::Graph& graph);
  // The highest-priority placement among `replaced` (fused nodes included).
  std::optional<size_t> placement_of(const ir::Graph& graph, const std::vector<ir::NodeId>& replaced) const;
  bool runs(size_t ep, const ir::Graph& graph, const ir::Node& fused, const std::map<std::string, ir::ValueType>& staged,
            const std::map<std::string, Tensor>& staged_initializers) const;
  bool runs_uncached(size_t ep, const ir::Graph& graph, const ir::Node& fused,
                     const std::function<const ir::ValueType*(const std::string&)>& type_of,
                     const std::map<std::string, Tensor>& staged_initializers) const;

  partition::PartitionInputs in_;
  bool placed_ = false;
  std::map<ir::NodeId, size_t> ep_of_node_;       // trial placement of the graph's nodes
  std::map<std::string, size_t> ep_of_fused_;     // fused nodes accepted since, by first output
  // runs() answers by EP and what a claim can see of the node (op, input
  // types and shapes, which inputs are constants, attributes): a BERT's
  // twelve identical Attention nodes ask once.
  mutable std::map<std::string, bool> answers_;
};

}  // namespace loom::session
