// Reshape shape folding: a Reshape whose target shape is assembled at run
// time from the input's own dims (the Shape -> Gather -> Unsqueeze -> Concat
// chains PyTorch exports for `x.view(x.size(0), x.size(1), heads, -1)`) gets
// a constant shape instead, with 0 ("copy this dim from the input") where the
// chain read dim i of the reshaped tensor into position i. The chain then
// dies (dead-code elimination) and EPs that want constant shapes can claim
// the Reshape. Only with allowzero = 0, where 0 means copy.
#include <optional>
#include <unordered_map>

#include "transform/framework/graph_matcher.h"
#include "transform/framework/graph_patch.h"
#include "transform/passes/passes.h"

namespace loom::transform {
namespace {

const ir::Attribute* attr(const ir::Node& n, const std::string& name) { return n.find_attribute(name); }

class ReshapeShapeFolding : public Pass {
 public:
  std::string name() const override { return "reshape_shape_folding"; }
  OptimizationLevel level() const override { return OptimizationLevel::kBasic; }

  Status run(ir::Graph& graph, PassContext&, bool* changed) override {
    producer_.clear();
    for (const auto& n : graph.nodes())
      for (const std::string& o : n->outputs) producer_[o] = n.get();
    for (const auto& n : graph.nodes()) {
      if (n->op_type != "Reshape" || !n->domain.empty() || n->inputs.size() != 2) continue;
      if (const ir::Attribute* a = attr(*n, "allowzero"); a && a->i != 0) continue;
      if (graph.is_initializer(n->inputs[1])) continue;
      auto shape = constant_shape(graph, *n);
      if (!shape) continue;
      GraphPatch patch(graph, name() + " at node " + n->label());
      const std::string c = patch.add_initializer(n->inputs[1] + "/folded",
                                                  Tensor::from_vector(DType::kInt64, {static_cast<int64_t>(shape->size())}, *shape));
      patch.set_input(n->id, 1, c);
      LOOM_RETURN_IF_ERROR(patch.commit());
      *changed = true;
    }
    return Status::ok();
  }

 private:
  const ir::Node* producer(const std::string& v) const {
    auto it = producer_.find(v);
    return it == producer_.end() ? nullptr : it->second;
  }

  // The target shape with copied dims as 0, when every element is a
  // constant or dim `position` of the reshaped tensor itself.
  std::optional<std::vector<int64_t>> constant_shape(const ir::Graph& g, const ir::Node& reshape) const {
    const ir::Node* concat = producer(reshape.inputs[1]);
    if (concat == nullptr || concat->op_type != "Concat" || !concat->domain.empty()) return std::nullopt;
    if (const ir::Attribute* a = attr(*concat, "axis"); !a || (a->i != 0 && a->i != -1)) return std::nullopt;
    std::vector<int64_t> shape;
    for (const std::string& piece : concat->inputs) {
      if (auto values = int_constant(g, piece)) {
        shape.insert(shape.end(), values->begin(), values->end());
        continue;
      }
      auto dim = own_dim(g, piece, reshape.inputs[0]);
      if (!dim || *dim != static_cast<int64_t>(shape.size())) return std::nullopt;
      shape.push_back(0);
    }
    return shape;
  }

  // k when `piece` is the 1-element tensor [dim k of `data`]:
  // Unsqueeze(Gather(Shape(data), k), axes [0]) or Gather(Shape(data), [k]).
  std::optional<int64_t> own_dim(const ir::Graph& g, const std::string& piece, const std::string& data) const {
    const ir::Node* n = producer(piece);
    if (n == nullptr || !n->domain.empty()) return std::nullopt;
    bool scalar_index = false;
    if (n->op_type == "Unsqueeze") {
      std::optional<std::vector<int64_t>> axes;
      if (n->inputs.size() >= 2) axes = int_constant(g, n->inputs[1]);
      else if (const ir::Attribute* a = attr(*n, "axes")) axes = a->ints;
      if (!axes || axes->size() != 1 || ((*axes)[0] != 0 && (*axes)[0] != -1)) return std::nullopt;
      n = producer(n->inputs[0]);
      scalar_index = true;
      if (n == nullptr || !n->domain.empty()) return std::nullopt;
    }
    if (n->op_type != "Gather" || n->inputs.size() != 2) return std::nullopt;
    if (const ir::Attribute* a = attr(*n, "axis"); a && a->i != 0) return std::nullopt;
    auto index = int_constant(g, n->inputs[1]);
    const auto& index_dims = g.initializers.at(n->inputs[1]).dims();
    if (!index || index->size() != 1 || index_dims.size() != (scalar_index ? 0u : 1u)) return std::nullopt;
    const ir::Node* shape = producer(n->inputs[0]);
    if (shape == nullptr || shape->op_type != "Shape" || !shape->domain.empty() || shape->inputs[0] != data)
      return std::nullopt;
    if (attr(*shape, "start") || attr(*shape, "end")) return std::nullopt;
    int64_t k = (*index)[0];
    if (k < 0) {
      const ir::ValueType* t = g.type_of(data);
      if (t == nullptr || !t->has_shape) return std::nullopt;
      k += static_cast<int64_t>(t->dims.size());
    }
    return k >= 0 ? std::optional<int64_t>(k) : std::nullopt;
  }

  std::unordered_map<std::string, const ir::Node*> producer_;
};

}  // namespace

std::unique_ptr<Pass> make_reshape_shape_folding() { return std::make_unique<ReshapeShapeFolding>(); }

}  // namespace loom::transform
