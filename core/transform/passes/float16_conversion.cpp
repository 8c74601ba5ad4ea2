#include "transform/passes/float16_conversion.h"

#include <cmath>
#include <set>

#include "loom/sdk/dtype.h"
#include "transform/passes/float16_ops.h"
#include "transform/framework/fused_node.h"
#include "transform/framework/graph_patch.h"

namespace loom::transform {
namespace {

// A T value with a known shape under this many elements is shape arithmetic
// on floats (scales, sizes), which keeps its type.
constexpr int64_t kSmallElements = 64;
constexpr float kHalfMax = 65504.f;

bool tensor_of(const ir::ValueType* t, DType dtype) {
  return t != nullptr && t->kind == ValueKind::kTensor && t->dtype == dtype;
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

ir::ValueType retyped(ir::ValueType t, DType dtype) {
  t.dtype = dtype;
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

// A float16 constant as float32 (exact).
Tensor float_tensor_of(const Tensor& h) {
  Tensor f = Tensor::zeros(DType::kFloat, h.dims()).value();
  const uint16_t* src = h.data_as<uint16_t>();
  float* dst = f.mutable_data_as<float>();
  for (int64_t i = 0; i < h.element_count(); ++i) dst[i] = sdk::Float16::to_float(src[i]);
  return f;
}

// Which way a conversion goes: the element type T values have and get, the
// suffix of the new values' names, and how constants convert.
struct Direction {
  DType from, to;
  const char* name;    // the patch's and the Casts' name
  const char* suffix;  // of the converted values' names
  Tensor (*convert)(const Tensor&);
};
constexpr Direction kToHalf{DType::kFloat, DType::kFloat16, "float16_conversion", "_fp16", half_tensor};
constexpr Direction kToFloat{DType::kFloat16, DType::kFloat, "float32_compute", "_fp32", float_tensor_of};

// Whether `n` may be converted under `rule`: every T value a tensor of
// type `from`, no other value of that type, and the node part of the
// compute: one T value is not small, or a T input comes from a converted node.
bool convertible(const ir::Graph& g, const ir::Node& n, const Float16OpRule& rule, DType from,
                 const std::set<std::string>& made_converted) {
  bool compute = false, any = false;
  auto look = [&](const std::vector<std::string>& values, const std::vector<int>& positions, bool inputs) {
    for (size_t i = 0; i < values.size(); ++i) {
      if (values[i].empty()) continue;
      const ir::ValueType* t = g.type_of(values[i]);
      if (!float16_position(positions, i)) {
        if (t != nullptr && t->dtype == from) return false;  // a value of the converted type outside T
        continue;
      }
      if (!tensor_of(t, from)) return false;
      any = true;
      if (!small(*t) || (inputs && made_converted.count(values[i]))) compute = true;
    }
    return true;
  };
  if (!look(n.inputs, rule.inputs, true) || !look(n.outputs, rule.outputs, false)) return false;
  return any && compute;
}

// Whether a listed node has T values of type `from` at all (for the report).
bool has_t_value_of(const ir::Graph& g, const ir::Node& n, const Float16OpRule& rule, DType from) {
  for (size_t i = 0; i < n.inputs.size(); ++i)
    if (!n.inputs[i].empty() && float16_position(rule.inputs, i) && tensor_of(g.type_of(n.inputs[i]), from))
      return true;
  return false;
}

class Converter {
 public:
  Converter(ir::Graph& g, const Float16Accept& accept, const Direction& d)
      : g_(g), accept_(accept), d_(d), patch_(g, d.name) {}

  Expected<Float16Report> run() {
    // Most graphs have nothing of the type to convert: they are left as they
    // are without ordering them. A graph that cannot be ordered is left too;
    // planning reports its cycle.
    bool any = false;
    for (const auto& np : g_.nodes()) {
      const Float16OpRule* rule = float16_rule(np->domain, np->op_type);
      any = any || (rule != nullptr && has_t_value_of(g_, *np, *rule, d_.from));
    }
    if (!any) return report_;
    auto sorted = g_.topological_order();
    if (!sorted) return report_;
    const std::vector<ir::Node*>& order = *sorted;
    std::set<std::string> made_converted;  // values a converted node now makes in the other type
    for (const ir::Node* node : order) {
      const Float16OpRule* rule = float16_rule(node->domain, node->op_type);
      if (rule == nullptr) continue;
      if (!convertible(g_, *node, *rule, d_.from, made_converted)) {
        if (has_t_value_of(g_, *node, *rule, d_.from)) ++report_.nodes_kept;
        continue;
      }
      ir::Node changed = *node;
      for (size_t i = 0; i < changed.inputs.size(); ++i)
        if (!changed.inputs[i].empty() && float16_position(rule->inputs, i)) changed.inputs[i] = converted_name(changed.inputs[i]);
      for (size_t i = 0; i < changed.outputs.size(); ++i)
        if (!changed.outputs[i].empty() && float16_position(rule->outputs, i))
          changed.outputs[i] = converted_name(changed.outputs[i]);
      if (accept_ && !accept_(g_, {node->id}, changed, staged_, patch_.staged_initializers())) {
        ++report_.nodes_kept;
        continue;
      }
      for (size_t i = 0; i < node->outputs.size(); ++i)
        if (!node->outputs[i].empty() && float16_position(rule->outputs, i)) made_converted.insert(node->outputs[i]);
      accepted_.push_back({node, rule, std::move(changed)});
    }
    if (accepted_.empty()) return report_;
    rewrite(made_converted);
    LOOM_RETURN_IF_ERROR(patch_.commit());
    drop_unread();
    report_.nodes_converted = static_cast<int64_t>(accepted_.size());
    return report_;
  }

 private:
  struct Accepted {
    const ir::Node* node;
    const Float16OpRule* rule;
    ir::Node changed;  // the node as it becomes
  };

  // The converted name of value `v` (made once): a converted copy of a
  // constant, or a fresh name that a converted node or a Cast will define.
  const std::string& converted_name(const std::string& v) {
    auto it = converted_.find(v);
    if (it != converted_.end()) return it->second;
    std::string name;
    if (g_.is_initializer(v) && !g_.is_graph_input(v)) {
      name = patch_.add_initializer(v + d_.suffix, d_.convert(g_.initializers.at(v)));
      converted_constants_.insert(name);
    } else {
      name = patch_.fresh_name(v + d_.suffix);
    }
    staged_[name] = retyped(*g_.type_of(v), d_.to);
    return converted_[v] = name;
  }

  ir::Node cast(const std::string& from, const std::string& to, DType type) {
    ir::Node c = fused_node(g_, "Cast", "", {from}, {to}, std::string(d_.name) + "/" + to);
    set_int_attr(c, "to", static_cast<int64_t>(type));
    ++report_.casts_added;
    return c;
  }

  void rewrite(const std::set<std::string>& made_converted) {
    std::set<ir::NodeId> converted;
    for (const Accepted& a : accepted_) converted.insert(a.node->id);
    // Who else reads each value in its original type: unconverted nodes,
    // subgraphs, the graph's outputs.
    std::set<std::string> original_readers = g_.outer_scope_references();
    for (const std::string& o : g_.outputs) original_readers.insert(o);
    for (const auto& np : g_.nodes())
      if (!converted.count(np->id))
        for (const std::string& v : ir::values_read(*np)) original_readers.insert(v);
    std::set<std::string> cast_in;
    for (const Accepted& a : accepted_) {
      patch_.remove_node(a.node->id);
      for (size_t i = 0; i < a.node->outputs.size(); ++i) {
        const std::string& o = a.node->outputs[i];
        if (o.empty() || !float16_position(a.rule->outputs, i)) continue;
        patch_.set_type(converted_name(o), staged_.at(converted_name(o)));
        if (original_readers.count(o)) {
          patch_.add_node(cast(converted_name(o), o, d_.from));
        } else {
          gone_.insert(o);
        }
      }
      for (size_t i = 0; i < a.node->inputs.size(); ++i) {
        const std::string& v = a.node->inputs[i];
        if (v.empty() || !float16_position(a.rule->inputs, i) || made_converted.count(v)) continue;
        if (converted_constants_.count(converted_name(v)) || !cast_in.insert(v).second) continue;
        patch_.set_type(converted_name(v), staged_.at(converted_name(v)));
        patch_.add_node(cast(v, converted_name(v), d_.to));
      }
      patch_.add_node(a.changed);
    }
  }

  // Constants nothing reads any more (originals whose readers all
  // converted, converted copies whose readers all declined) and the types of
  // values no node makes now.
  void drop_unread() {
    std::set<std::string> read = g_.outer_scope_references();
    for (const std::string& o : g_.outputs) read.insert(o);
    for (const auto& np : g_.nodes())
      for (const std::string& v : ir::values_read(*np)) read.insert(v);
    for (auto it = g_.initializers.begin(); it != g_.initializers.end();) {
      const bool copy = converted_constants_.count(it->first) > 0;
      const bool original = converted_.count(it->first) > 0;  // a constant with a converted copy
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
  const Direction& d_;
  GraphPatch patch_;
  Float16Report report_;
  std::map<std::string, std::string> converted_;     // original value -> its converted name
  std::map<std::string, ir::ValueType> staged_;       // types of the converted names
  std::set<std::string> converted_constants_;         // converted copies of constants
  std::set<std::string> gone_;                        // original outputs no node makes after the rewrite
  std::vector<Accepted> accepted_;
};

}  // namespace

Expected<Float16Report> convert_to_float16(ir::Graph& graph, const Float16Accept& accept) {
  return Converter(graph, accept, kToHalf).run();
}

Expected<Float16Report> compute_float16_in_float32(ir::Graph& graph, const Float16Accept& accept) {
  return Converter(graph, accept, kToFloat).run();
}

}  // namespace loom::transform
