// Constant folding: a node whose inputs are all initializers is evaluated
// once at session creation and its outputs become initializers. So does a
// Shape of a value whose dims are all known, as ONNX Runtime folds it: the
// Shape -> Gather -> Concat -> Expand chains PyTorch exports for an RNN's
// zero initial state, say, then fold away.
#include <algorithm>
#include <optional>
#include <set>

#include "base/logging.h"
#include "transform/framework/graph_matcher.h"
#include "transform/passes/passes.h"

namespace loom::transform {
namespace {

// Ops whose result must differ from run to run, or that would be pointless
// to fold.
const std::set<std::string> kNeverFold = {"RandomUniform", "RandomNormal", "RandomUniformLike",
                                          "RandomNormalLike", "Bernoulli", "Multinomial"};

// Folded outputs may not grow the model beyond this (e.g. ConstantOfShape or
// Expand of a scalar into a huge tensor).
constexpr size_t kMaxFoldedGrowthBytes = 64u << 20;

class ConstantFolding : public Pass {
 public:
  std::string name() const override { return "constant_folding"; }
  OptimizationLevel level() const override { return OptimizationLevel::kBasic; }

  Status run(ir::Graph& graph, PassContext& ctx, bool* changed) override {
    if (!ctx.evaluate) return Status::ok();
    LOOM_ASSIGN_OR_RETURN(std::vector<ir::Node*> order, graph.topological_order());
    // Looked up per node: a model may list every initializer as an input.
    const std::set<std::string> inputs(graph.inputs.begin(), graph.inputs.end());
    std::set<ir::NodeId> folded;
    for (ir::Node* n : order) {
      if (std::optional<Tensor> dims = known_shape(graph, *n)) {
        become_initializer(graph, n->outputs[0], *dims);
        folded.insert(n->id);
        continue;
      }
      if (!foldable(graph, inputs, *n)) continue;
      if (const std::shared_ptr<Tensor>& value = constant_tensor(*n)) {
        become_initializer(graph, n->outputs[0], *value);
        folded.insert(n->id);
        continue;
      }
      auto outputs = ctx.evaluate(graph, *n);
      if (!outputs) {
        // Not fatal: the node runs at run time and reports its error then.
        log::logger()->debug("{}: not folding node {}: {}", ctx.model_name, n->label(), outputs.status().message());
        continue;
      }
      size_t bytes = 0;
      for (const Tensor& t : *outputs) bytes += t.byte_size();
      if (bytes > kMaxFoldedGrowthBytes) continue;
      for (size_t i = 0; i < n->outputs.size() && i < outputs->size(); ++i)
        if (!n->outputs[i].empty()) become_initializer(graph, n->outputs[i], (*outputs)[i]);
      folded.insert(n->id);
    }
    if (!folded.empty()) {
      graph.remove_nodes(folded);
      *changed = true;
    }
    return Status::ok();
  }

 private:
  // The tensor of a Constant node given as one (its value: shared with the
  // node rather than evaluated, which would copy it; exporters such as
  // paddle2onnx keep every weight in a Constant), or null.
  static const std::shared_ptr<Tensor>& constant_tensor(const ir::Node& n) {
    static const std::shared_ptr<Tensor> none;
    if (!GraphMatcher::is(n, "Constant", 0) || n.outputs[0].empty() || n.attributes.size() != 1) return none;
    const ir::Attribute& a = n.attributes[0];
    return a.name == "value" && a.type == ir::AttrType::kTensor ? a.tensor : none;
  }

  // The value of Shape node `n` when the dims of its input are all known for
  // every run: a value of the main graph (a loop body's carried values may
  // change shape between iterations) whose dims inference derived, or a
  // graph input's (runs must match its fixed dims); not an overridable
  // initializer's (a run may give another shape) nor what a model file's
  // declaration says of a value the graph makes (it may be wrong).
  static std::optional<Tensor> known_shape(const ir::Graph& graph, const ir::Node& n) {
    if (!GraphMatcher::is(n, "Shape", 1) || n.outputs.empty() || n.outputs[0].empty() || graph.parent != nullptr)
      return std::nullopt;
    const std::string& in = n.inputs[0];
    const ir::ValueType* type = graph.type_of(in);
    const bool graph_input = graph.is_graph_input(in);
    if (type == nullptr || !type->fully_known() || (graph_input && graph.is_initializer(in)) ||
        (type->declared && !graph_input))
      return std::nullopt;
    const Dims dims = type->known_dims();
    const int64_t rank = static_cast<int64_t>(dims.size());
    // Opset 15's start / end: negative from the back, clamped to [0, rank].
    auto bound = [&](const char* name, int64_t fallback) {
      const ir::Attribute* a = n.find_attribute(name);
      int64_t v = a != nullptr && a->type == ir::AttrType::kInt ? a->i : fallback;
      if (v < 0) v += rank;
      return std::clamp<int64_t>(v, 0, rank);
    };
    const int64_t start = bound("start", 0), end = std::max(start, bound("end", rank));
    const std::vector<int64_t> values(dims.begin() + start, dims.begin() + end);
    return Tensor::from_vector(DType::kInt64, {end - start}, values);
  }

  static void become_initializer(ir::Graph& graph, const std::string& value, const Tensor& t) {
    graph.value_types[value] = ir::tensor_type(t);
    graph.initializers[value] = t;
  }

  static bool foldable(const ir::Graph& graph, const std::set<std::string>& graph_inputs, const ir::Node& n) {
    if (kNeverFold.count(n.op_type) || n.outputs.empty()) return false;
    for (const ir::Attribute& a : n.attributes)
      if (a.graph || !a.graphs.empty()) return false;
    for (const std::string& in : n.inputs)
      if (!in.empty() && !graph.is_initializer(in)) return false;
    // A graph input that is also an initializer may be overridden at run time.
    for (const std::string& in : n.inputs)
      if (!in.empty() && graph_inputs.count(in)) return false;
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> make_constant_folding() { return std::make_unique<ConstantFolding>(); }

}  // namespace loom::transform
