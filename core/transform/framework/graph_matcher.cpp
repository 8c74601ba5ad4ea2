#include "transform/framework/graph_matcher.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

namespace loom::transform {

GraphMatcher::GraphMatcher(const ir::Graph& graph) : graph_(graph) {}

void GraphMatcher::index() const {
  if (indexed_) return;
  indexed_ = true;
  producer_.reserve(graph_.nodes().size() * 2);
  consumers_.reserve(graph_.nodes().size() * 2);
  graph_inputs_.insert(graph_.inputs.begin(), graph_.inputs.end());
  graph_outputs_.insert(graph_.outputs.begin(), graph_.outputs.end());
  std::vector<std::string_view> read;
  for (const auto& n : graph_.nodes()) {
    for (const std::string& o : n->outputs)
      if (!o.empty()) producer_[o] = n.get();
    read.assign(n->inputs.begin(), n->inputs.end());
    for (const std::string& c : ir::captured_values(*n)) read.push_back(*captured_.insert(c).first);
    std::sort(read.begin(), read.end());
    read.erase(std::unique(read.begin(), read.end()), read.end());
    for (std::string_view v : read)
      if (!v.empty()) consumers_[v].push_back(n.get());
  }
}

const ir::Node* GraphMatcher::producer(const std::string& value) const {
  index();
  auto it = producer_.find(value);
  return it == producer_.end() ? nullptr : it->second;
}

const std::vector<const ir::Node*>& GraphMatcher::consumers(const std::string& value) const {
  static const std::vector<const ir::Node*> kNone;
  index();
  auto it = consumers_.find(value);
  return it == consumers_.end() ? kNone : it->second;
}

bool GraphMatcher::is_graph_input(const std::string& value) const {
  index();
  return graph_inputs_.count(value) > 0;
}

const ir::Node* GraphMatcher::sole_consumer(const std::string& value) const {
  const auto& c = consumers(value);  // indexes graph_outputs_ too
  if (graph_outputs_.count(value)) return nullptr;
  return c.size() == 1 ? c[0] : nullptr;
}

bool GraphMatcher::is(const ir::Node& n, const std::string& op, size_t inputs, size_t outputs) {
  return n.op_type == op && n.domain.empty() && n.inputs.size() == inputs && n.outputs.size() == outputs;
}

bool GraphMatcher::is_float(const std::string& value) const {
  const ir::ValueType* t = graph_.type_of(value);
  return t != nullptr && t->kind == ValueKind::kTensor && t->dtype == DType::kFloat;
}

bool GraphMatcher::is_float_constant(const std::string& value) const {
  auto it = graph_.initializers.find(value);
  return it != graph_.initializers.end() && !is_graph_input(value) && it->second.dtype() == DType::kFloat;
}

std::optional<std::vector<float>> GraphMatcher::float_constant(const std::string& value) const {
  if (!is_float_constant(value)) return std::nullopt;
  const Tensor& t = graph_.initializers.at(value);
  const float* d = t.data_as<float>();
  return std::vector<float>(d, d + t.element_count());
}

std::optional<std::vector<float>> GraphMatcher::constant_node_floats(const std::string& value) const {
  const ir::Node* n = producer(value);
  if (n == nullptr || n->op_type != "Constant" || !n->domain.empty() || !n->inputs.empty()) return std::nullopt;
  if (const ir::Attribute* a = n->find_attribute("value_float"); a && a->type == ir::AttrType::kFloat)
    return std::vector<float>{a->f};
  const ir::Attribute* a = n->find_attribute("value");
  if (a == nullptr || a->type != ir::AttrType::kTensor || !a->tensor || a->tensor->dtype() != DType::kFloat)
    return std::nullopt;
  const float* d = a->tensor->data_as<float>();
  return std::vector<float>(d, d + a->tensor->element_count());
}

std::optional<std::pair<float, float>> GraphMatcher::clip_bounds(const ir::Node& clip) const {
  float lo = -FLT_MAX, hi = FLT_MAX;
  if (clip.opset < 11) {
    if (clip.inputs.size() != 1) return std::nullopt;
    return std::pair{clip.float_attr("min", lo), clip.float_attr("max", hi)};
  }
  for (size_t i = 1; i < clip.inputs.size(); ++i) {
    if (clip.inputs[i].empty()) continue;
    auto c = float_constant(clip.inputs[i]);
    if (!c) c = constant_node_floats(clip.inputs[i]);
    if (!c || c->size() != 1) return std::nullopt;
    (i == 1 ? lo : hi) = (*c)[0];
  }
  return std::pair{lo, hi};
}

std::optional<Dims> GraphMatcher::constant_dims(const std::string& value) const {
  auto it = graph_.initializers.find(value);
  if (it == graph_.initializers.end() || is_graph_input(value)) return std::nullopt;
  return it->second.dims();
}

std::optional<float> GraphMatcher::scalar_operand(const ir::Node& n, const std::string& op,
                                                  const std::string& value) const {
  if (!is(n, op, 2)) return std::nullopt;
  const bool commutative = op == "Add" || op == "Mul";
  size_t k;
  if (n.inputs[0] == value && n.inputs[1] != value) k = 1;
  else if (commutative && n.inputs[1] == value && n.inputs[0] != value) k = 0;
  else return std::nullopt;
  auto c = float_constant(n.inputs[k]);
  if (!c || c->size() != 1) return std::nullopt;
  const size_t const_rank = constant_dims(n.inputs[k])->size();
  const ir::ValueType* t = graph_.type_of(value);
  const bool fits = const_rank <= 1 || (t != nullptr && t->has_shape && const_rank <= t->dims.size());
  if (!fits) return std::nullopt;
  return (*c)[0];
}

bool GraphMatcher::op_with_scalar(const ir::Node& n, const std::string& op, const std::string& value,
                                  double want) const {
  auto c = scalar_operand(n, op, value);
  return c && std::fabs(*c - want) <= 1e-6 * std::max(1.0, std::fabs(want));
}

std::string GraphMatcher::vector_operand(const ir::Node& n, const std::string& op, const std::string& value) const {
  if (!is(n, op, 2) || n.inputs[0] == n.inputs[1]) return "";
  const size_t k = n.inputs[0] == value ? 1 : n.inputs[1] == value ? 0 : 2;
  if (k == 2) return "";
  const int64_t c = last_dim(value);
  auto dims = constant_dims(n.inputs[k]);
  if (c <= 0 || !dims || *dims != Dims{c} || !is_float_constant(n.inputs[k])) return "";
  return n.inputs[k];
}

std::optional<GraphMatcher::BiasAdd> GraphMatcher::bias_add(const std::string& x,
                                                             const std::set<ir::NodeId>& pattern) const {
  const ir::Node* add = producer(x);
  if (!add || graph_outputs_.count(x) || !is(*add, "Add", 2)) return std::nullopt;  // producer() indexed it
  for (const ir::Node* c : consumers(x))
    if (!pattern.count(c->id)) return std::nullopt;
  for (size_t k = 0; k < 2; ++k) {
    const std::string& input = add->inputs[1 - k];
    if (vector_operand(*add, "Add", input) == add->inputs[k] && is_float(input) && last_dim(input) == last_dim(x))
      return BiasAdd{add, input, add->inputs[k]};
  }
  return std::nullopt;
}

int64_t GraphMatcher::last_dim(const std::string& value) const {
  const ir::ValueType* t = graph_.type_of(value);
  if (t == nullptr || !t->has_shape || t->dims.empty()) return -1;
  return t->dims.back().value;
}

bool GraphMatcher::is_last_axis_mean(const ir::Node& n) const {
  if (n.op_type != "ReduceMean" || !n.domain.empty() || n.inputs.empty() || n.outputs.size() != 1) return false;
  if (!is_float(n.inputs[0])) return false;
  if (const ir::Attribute* k = n.find_attribute("keepdims"); k && k->i != 1) return false;
  std::vector<int64_t> axes;
  if (n.opset < 18) {
    const ir::Attribute* a = n.find_attribute("axes");
    if (n.inputs.size() != 1 || a == nullptr) return false;
    axes = a->ints;
  } else {
    if (n.inputs.size() != 2) return false;
    auto c = int_constant(graph_, n.inputs[1]);
    if (!c || c->size() != 1) return false;
    axes = *c;
  }
  if (axes.size() != 1) return false;
  if (axes[0] == -1) return true;
  const ir::ValueType* t = graph_.type_of(n.inputs[0]);
  return t != nullptr && t->has_shape && !t->dims.empty() && axes[0] == static_cast<int64_t>(t->dims.size()) - 1;
}

}  // namespace loom::transform
