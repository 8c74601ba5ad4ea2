#include "transform/float16_conversion.h"

#include <cmath>
#include <set>

#include "loom/sdk/dtype.h"
#include "transform/float16_ops.h"
#include "transform/fused_node.h"
#include "transform/graph_patch.h"

namespace loom::transform {
namespace {

// A T value with a known shape under this many elements is shape arithmetic
// on floats (scales, sizes), which keeps float32.
constexpr int64_t kSmallElements = 64;
constexpr float kHalfMax = 65504.f;

bool float32_tensor(const ir::ValueType* t) {
  return t != nullptr && t->kind == ValueKind::kTensor && t->dtype == DType::kFloat;
}

bool small(const ir::ValueType& t) {
  if (!t.fully_known()) return false;
  int64_t n = 1;
  for (const DimInfo& d : t.dims) {
    if (d.value >= kSmallElements) return false;
    n *= d.value;  // each factor < 64 and the product stays < 64 before the next one
    if (n >= kSmallElements) return false;
  }
  return true;
}

ir::ValueType half_type(ir::ValueType t) {
  t.dtype = DType::kFloat16;
  return t;
}

// A float32 constant as float16, saturating at float16's largest finite
// value (an overflow to infinity would poison every product it enters).
Tensor half_tensor(const Tensor& f) {
  Tensor h = Tensor::zeros(DType::kFloat16, f.dims()).value();
  const float* src = f.data_as<float>();
  uint16_t* dst = h.mutable_data_as<uint16_t>();
  for (int64_t i = 0; i < f.element_count(); ++i) {
    float v = src[i];
    if (std::isfinite(v)) v = std::fmax(-kHalfMax, std::fmin(kHalfMax, v));
    dst[i] = sdk::Float16::from_float(v);
  }
  return h;
}

// Whether `n` may be converted under `rule`: every T value a float32
// tensor, no other float32 value, and the node part of the compute: one T
// value is not small, or a T input comes from a converted node.
bool convertible(const ir::Graph& g, const ir::Node& n, const Float16OpRule& rule,
                 const std::set<std::string>& made_half) {
  bool compute = false, any = false;
  auto look = [&](const std::vector<std::string>& values, const std::vector<int>& positions, bool inputs) {
    for (size_t i = 0; i < values.size(); ++i) {
      if (values[i].empty()) continue;
      const ir::ValueType* t = g.type_of(values[i]);
      if (!float16_position(positions, i)) {
        if (t != nullptr && t->dtype == DType::kFloat) return false;  // a float32 value outside T
        continue;
      }
      if (!float32_tensor(t)) return false;
      any = true;
      if (!small(*t) || (inputs && made_half.count(values[i]))) compute = true;
    }
    return true;
  };
  if (!look(n.inputs, rule.inputs, true) || !look(n.outputs, rule.outputs, false)) return false;
  return any && compute;
}

// Whether a listed node has float32 T values at all (for the report).
bool has_float32_t_value(const ir::Graph& g, const ir::Node& n, const Float16OpRule& rule) {
  for (size_t i = 0; i < n.inputs.size(); ++i)
    if (!n.inputs[i].empty() && float16_position(rule.inputs, i) && float32_tensor(g.type_of(n.inputs[i])))
      return true;
  return false;
}

class Converter {
 public:
  Converter(ir::Graph& g, const Float16Accept& accept) : g_(g), accept_(accept), patch_(g, "float16_conversion") {}

  Expected<Float16Report> run() {
    LOOM_ASSIGN_OR_RETURN(std::vector<ir::Node*> order, g_.topological_order());
    std::set<std::string> made_half;  // float32 values a converted node now makes in float16
    for (const ir::Node* node : order) {
      const Float16OpRule* rule = float16_rule(node->domain, node->op_type);
      if (rule == nullptr) continue;
      if (!convertible(g_, *node, *rule, made_half)) {
        if (has_float32_t_value(g_, *node, *rule)) ++report_.nodes_kept;
        continue;
      }
      ir::Node half = *node;
      for (size_t i = 0; i < half.inputs.size(); ++i)
        if (!half.inputs[i].empty() && float16_position(rule->inputs, i)) half.inputs[i] = half_name(half.inputs[i]);
      for (size_t i = 0; i < half.outputs.size(); ++i)
        if (!half.outputs[i].empty() && float16_position(rule->outputs, i))
          half.outputs[i] = half_name(half.outputs[i]);
      if (accept_ && !accept_(g_, {node->id}, half, staged_, patch_.staged_initializers())) {
        ++report_.nodes_kept;
        continue;
      }
      for (size_t i = 0; i < node->outputs.size(); ++i)
        if (!node->outputs[i].empty() && float16_position(rule->outputs, i)) made_half.insert(node->outputs[i]);
      accepted_.push_back({node, rule, std::move(half)});
    }
    if (accepted_.empty()) return report_;
    rewrite(made_half);
    LOOM_RETURN_IF_ERROR(patch_.commit());
    drop_unread();
    report_.nodes_converted = static_cast<int64_t>(accepted_.size());
    return report_;
  }

 private:
  struct Accepted {
    const ir::Node* node;
    const Float16OpRule* rule;
    ir::Node half;
  };

  // The float16 name of float32 value `v` (made once): a float16 copy of a
  // constant, or a fresh name that a converted node or a Cast will define.
  const std::string& half_name(const std::string& v) {
    auto it = half_.find(v);
    if (it != half_.end()) return it->second;
    std::string name;
    if (g_.is_initializer(v) && !g_.is_graph_input(v)) {
      name = patch_.add_initializer(v + "_fp16", half_tensor(g_.initializers.at(v)));
      half_constants_.insert(name);
    } else {
      name = patch_.fresh_name(v + "_fp16");
    }
    staged_[name] = half_type(*g_.type_of(v));
    return half_[v] = name;
  }

  ir::Node cast(const std::string& from, const std::string& to, DType type) {
    ir::Node c = fused_node(g_, "Cast", "", {from}, {to}, "float16_conversion/" + to);
    set_int_attr(c, "to", static_cast<int64_t>(type));
    ++report_.casts_added;
    return c;
  }

  void rewrite(const std::set<std::string>& made_half) {
    std::set<ir::NodeId> converted;
    for (const Accepted& a : accepted_) converted.insert(a.node->id);
    // Who else reads each value in float32: unconverted nodes, subgraphs,
    // the graph's outputs.
    std::set<std::string> float32_readers = g_.outer_scope_references();
    for (const std::string& o : g_.outputs) float32_readers.insert(o);
    for (const auto& np : g_.nodes())
      if (!converted.count(np->id))
        for (const std::string& v : ir::values_read(*np)) float32_readers.insert(v);
    std::set<std::string> cast_in;
    for (const Accepted& a : accepted_) {
      patch_.remove_node(a.node->id);
      for (size_t i = 0; i < a.node->outputs.size(); ++i) {
        const std::string& o = a.node->outputs[i];
        if (o.empty() || !float16_position(a.rule->outputs, i)) continue;
        patch_.set_type(half_name(o), staged_.at(half_name(o)));
        if (float32_readers.count(o)) {
          patch_.add_node(cast(half_name(o), o, DType::kFloat));
        } else {
          gone_.insert(o);
        }
      }
      for (size_t i = 0; i < a.node->inputs.size(); ++i) {
        const std::string& v = a.node->inputs[i];
        if (v.empty() || !float16_position(a.rule->inputs, i) || made_half.count(v)) continue;
        if (half_constants_.count(half_name(v)) || !cast_in.insert(v).second) continue;
        patch_.set_type(half_name(v), staged_.at(half_name(v)));
        patch_.add_node(cast(v, half_name(v), DType::kFloat16));
      }
      patch_.add_node(a.half);
    }
  }

  // Constants nothing reads any more (float32 originals whose readers all
  // converted, float16 copies whose readers all declined) and the types of
  // values no node makes now.
  void drop_unread() {
    std::set<std::string> read = g_.outer_scope_references();
    for (const std::string& o : g_.outputs) read.insert(o);
    for (const auto& np : g_.nodes())
      for (const std::string& v : ir::values_read(*np)) read.insert(v);
    for (auto it = g_.initializers.begin(); it != g_.initializers.end();) {
      const bool copy = half_constants_.count(it->first) > 0;
      const bool original = half_.count(it->first) > 0;  // a float32 constant with a float16 copy
      if ((copy || original) && !read.count(it->first) && !g_.is_graph_input(it->first)) {
        g_.value_types.erase(it->first);
        it = g_.initializers.erase(it);
        continue;
      }
      if (copy) ++report_.initializers_converted;
      ++it;
    }
    for (const std::string& v : gone_) g_.value_types.erase(v);
  }

  ir::Graph& g_;
  const Float16Accept& accept_;
  GraphPatch patch_;
  Float16Report report_;
  std::map<std::string, std::string> half_;       // float32 value -> its float16 name
  std::map<std::string, ir::ValueType> staged_;   // types of the float16 names
  std::set<std::string> half_constants_;          // float16 copies of constants
  std::set<std::string> gone_;                    // float32 outputs no node makes after the rewrite
  std::vector<Accepted> accepted_;
};

}  // namespace

Expected<Float16Report> convert_to_float16(ir::Graph& graph, const Float16Accept& accept) {
  return Converter(graph, accept).run();
}

}  // namespace loom::transform
