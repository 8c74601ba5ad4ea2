// Shape rules of If, Loop and Scan: their outputs take the shapes of their
// bodies' outputs (inferred first, by shapes.cpp's walk), merged with what
// else the output may be: the other branch, or the initial value of a
// state that zero iterations return unchanged. Scan outputs gain the
// iteration dim. Body inputs the model left untyped get the types the op
// feeds them (element type and rank; state dims may change per iteration).
#include "ir/type_precision.h"
#include "opreg/infer/shape_rules.h"

namespace loom::opreg {
namespace {

const ir::Graph* body(const ir::Node& n, const char* name) {
  const ir::Attribute* a = n.find_attribute(name);
  return a != nullptr && a->type == ir::AttrType::kGraph && a->graph ? a->graph.get() : nullptr;
}

// Output `k` of body `g`, when it is typed as a tensor.
const ir::ValueType* body_output(const ir::Graph& g, size_t k) {
  const ir::ValueType* t = k < g.outputs.size() ? g.type_of(g.outputs[k]) : nullptr;
  return t != nullptr && t->kind == ValueKind::kTensor ? t : nullptr;
}

std::optional<Shape> body_output_shape(const ir::Graph& g, size_t k) {
  const ir::ValueType* t = body_output(g, k);
  if (t == nullptr || !t->has_shape) return std::nullopt;
  return t->dims;
}

DType body_output_dtype(const ir::Graph& g, size_t k) {
  const ir::ValueType* t = body_output(g, k);
  return t == nullptr ? DType::kUndefined : t->dtype;
}

// What two shapes a value may have share: the rank where both agree, and
// each dim both know alike (the same size, or the same named symbol).
std::optional<Shape> common_shape(const std::optional<Shape>& a, const std::optional<Shape>& b) {
  if (!a || !b || a->size() != b->size()) return std::nullopt;
  Shape out;
  for (size_t i = 0; i < a->size(); ++i) {
    const DimInfo &x = (*a)[i], &y = (*b)[i];
    const bool same = x.value >= 0 ? x.value == y.value
                                   : y.value < 0 && !ir::anonymous_symbol(x.symbol) && x.symbol == y.symbol;
    out.push_back(same ? x : unknown_dim());
  }
  return out;
}

Shape unknown_dims(size_t rank) { return Shape(rank, unknown_dim()); }

// Gives body input `k` of `g` a tensor type where the model gave none.
void type_body_input(ir::Graph& g, size_t k, DType dtype, const std::optional<Shape>& dims) {
  if (k >= g.inputs.size() || g.type_of(g.inputs[k]) != nullptr || dtype == DType::kUndefined) return;
  ir::ValueType t;
  t.dtype = dtype;
  if (dims) {
    t.has_shape = true;
    t.dims = *dims;
  }
  g.value_types[g.inputs[k]] = std::move(t);
}

void if_rule(const ir::Node& n, ShapeContext& c) {
  const ir::Graph* then_g = body(n, "then_branch");
  const ir::Graph* else_g = body(n, "else_branch");
  if (then_g == nullptr || else_g == nullptr) return;
  for (size_t j = 0; j < n.outputs.size(); ++j)
    if (auto s = common_shape(body_output_shape(*then_g, j), body_output_shape(*else_g, j)))
      c.set(n.outputs[j], body_output_dtype(*then_g, j), *s);
}

// Loop(M, cond, v_initial...) -> (v_final..., scan_outputs...); its body
// (iteration_num, cond, v...) -> (cond, v..., scan_outputs...).
void loop_rule(const ir::Node& n, ShapeContext& c) {
  const ir::Graph* b = body(n, "body");
  if (b == nullptr || n.inputs.size() < 2) return;
  const size_t states = n.inputs.size() - 2;
  for (size_t j = 0; j < n.outputs.size(); ++j) {
    std::optional<Shape> out = body_output_shape(*b, j + 1);
    if (j < states) {
      out = common_shape(out, c.shape(n.inputs[j + 2]));
    } else if (out) {
      out->insert(out->begin(), unknown_dim());  // one row per iteration, the count known at run time
    }
    if (out) c.set(n.outputs[j], body_output_dtype(*b, j + 1), *out);
  }
}

// Scan (opset 9+): (states..., scan_inputs...) -> (states..., scan_outputs...),
// iterating along each scan input's axis; its body takes one slice of each.
void scan_rule(const ir::Node& n, ShapeContext& c) {
  const ir::Graph* b = body(n, "body");
  const int64_t scan_inputs = attr_int(n, "num_scan_inputs", -1);
  if (b == nullptr || n.opset < 9 || scan_inputs < 1 || static_cast<size_t>(scan_inputs) > n.inputs.size()) return;
  const size_t states = n.inputs.size() - static_cast<size_t>(scan_inputs);
  const std::vector<int64_t> in_axes = attr_ints(n, "scan_input_axes"), out_axes = attr_ints(n, "scan_output_axes");
  // The iteration count: the first scan input's length along its axis.
  DimInfo iterations = unknown_dim();
  if (auto first = c.shape(n.inputs[states]))
    if (auto axis = normalize_axis(in_axes.empty() ? 0 : in_axes[0], first->size())) iterations = (*first)[*axis];
  for (size_t j = 0; j < n.outputs.size(); ++j) {
    std::optional<Shape> out = body_output_shape(*b, j);
    if (j < states) {
      out = common_shape(out, c.shape(n.inputs[j]));
    } else if (out) {
      const size_t k = j - states;
      const int64_t axis = k < out_axes.size() ? out_axes[k] : 0;
      auto at = normalize_axis(axis, out->size() + 1);
      if (!at) continue;
      out->insert(out->begin() + static_cast<std::ptrdiff_t>(*at), iterations);
    }
    if (out) c.set(n.outputs[j], body_output_dtype(*b, j), *out);
  }
}

}  // namespace

void type_control_flow_bodies(const ir::Node& n, const ShapeContext& c) {
  if (!n.domain.empty()) return;
  const ir::Attribute* a = n.find_attribute("body");
  if (a == nullptr || a->type != ir::AttrType::kGraph || !a->graph) return;
  ir::Graph& b = *a->graph;
  if (n.op_type == "Loop") {
    type_body_input(b, 0, DType::kInt64, Shape{});
    type_body_input(b, 1, DType::kBool, Shape{});
    for (size_t k = 2; k < n.inputs.size(); ++k) {
      auto s = c.shape(n.inputs[k]);
      type_body_input(b, k, c.dtype_of(n.inputs[k]), s ? std::optional<Shape>(unknown_dims(s->size())) : std::nullopt);
    }
  } else if (n.op_type == "Scan" && n.opset >= 9) {
    const int64_t scan_inputs = attr_int(n, "num_scan_inputs", -1);
    if (scan_inputs < 1 || static_cast<size_t>(scan_inputs) > n.inputs.size()) return;
    const size_t states = n.inputs.size() - static_cast<size_t>(scan_inputs);
    const std::vector<int64_t> axes = attr_ints(n, "scan_input_axes");
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      std::optional<Shape> s = c.shape(n.inputs[k]);
      if (s && k < states) s = unknown_dims(s->size());
      if (s && k >= states) {  // one slice along the scan axis
        const size_t i = k - states;
        auto axis = normalize_axis(i < axes.size() ? axes[i] : 0, s->size());
        if (axis)
          s->erase(s->begin() + static_cast<std::ptrdiff_t>(*axis));
        else
          s.reset();
      }
      type_body_input(b, k, c.dtype_of(n.inputs[k]), s);
    }
  }
}

void add_control_flow_shape_rules(ShapeRuleTable& t) {
  t[{"", "If"}] = if_rule;
  t[{"", "Loop"}] = loop_rule;
  t[{"", "Scan"}] = scan_rule;
}

}  // namespace loom::opreg
