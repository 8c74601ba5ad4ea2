// Ops whose outputs are shapes or constants: Shape, Size, Constant,
// ConstantOfShape, Range, NonZero. Shape and small int constants are also
// recorded as values (shape_context.h) for the ops that read them.
#include <algorithm>
#include <cstdint>

#include "opreg/infer/shape_rules.h"

namespace loom::opreg {
namespace {

using C = ShapeContext;

void shape(const ir::Node& n, C& c) {
  auto s = c.shape(C::input(n, 0));
  if (!s) return;
  const auto r = static_cast<int64_t>(s->size());
  int64_t start = attr_int(n, "start", 0), end = attr_int(n, "end", r);
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = std::clamp<int64_t>(start, 0, r);
  end = std::clamp<int64_t>(end, start, r);
  c.set_value(n.outputs[0], Shape(s->begin() + start, s->begin() + end));
  c.set(n.outputs[0], DType::kInt64, {known_dim(end - start)});
}

void size(const ir::Node& n, C& c) {
  auto s = c.shape(C::input(n, 0));
  if (!s) return;
  int64_t p = 1;
  bool known = true;
  for (const DimInfo& d : *s) known = known && d.value >= 0 && !__builtin_mul_overflow(p, d.value, &p);
  if (known) c.set_value(n.outputs[0], {known_dim(p)});
  c.set(n.outputs[0], DType::kInt64, {});
}

void constant(const ir::Node& n, C& c) {
  for (const ir::Attribute& a : n.attributes) {
    Shape dims;
    DType dtype = DType::kUndefined;
    if (a.name == "value" && a.tensor) {
      for (int64_t d : a.tensor->dims()) dims.push_back(known_dim(d));
      dtype = a.tensor->dtype();
      const Tensor& t = *a.tensor;
      if (auto ints = small_int_values(t)) c.set_constant(n.outputs[0], std::move(*ints));
      if (dims.size() <= 1 && t.element_count() <= 64 && dtype == DType::kFloat)
        c.set_float_constant(n.outputs[0], std::vector<float>(t.data_as<float>(), t.data_as<float>() + t.element_count()));
    } else if (a.name == "value_int" || a.name == "value_float" || a.name == "value_string") {
      dtype = a.name == "value_int" ? DType::kInt64 : a.name == "value_float" ? DType::kFloat : DType::kString;
      if (a.name == "value_int") c.set_constant(n.outputs[0], {a.i});
    } else if (a.name == "value_ints" || a.name == "value_floats" || a.name == "value_strings") {
      const size_t count = a.name == "value_ints" ? a.ints.size() : a.name == "value_floats" ? a.floats.size() : a.strings.size();
      dims.push_back(known_dim(static_cast<int64_t>(count)));
      dtype = a.name == "value_ints" ? DType::kInt64 : a.name == "value_floats" ? DType::kFloat : DType::kString;
      if (a.name == "value_ints") c.set_constant(n.outputs[0], a.ints);
    } else {
      continue;
    }
    c.set(n.outputs[0], dtype, dims);
    return;
  }
}

void constant_of_shape(const ir::Node& n, C& c) {
  auto dims = c.value(C::input(n, 0));
  if (!dims) {  // the shape's values unknown, its length known: the rank only
    auto rank = rank_held(c.shape(C::input(n, 0)));
    if (!rank) return;
    dims = Shape(*rank, unknown_dim());
  }
  const ir::Attribute* v = n.find_attribute("value");
  c.set(n.outputs[0], v != nullptr && v->tensor ? v->tensor->dtype() : DType::kFloat, *dims);
}

// Range of constant integer start, limit and delta: max(ceil((limit -
// start) / delta), 0) elements.
void range(const ir::Node& n, C& c) {
  auto start = c.const_ints(C::input(n, 0)), limit = c.const_ints(C::input(n, 1)), delta = c.const_ints(C::input(n, 2));
  const DType dtype = c.dtype_of(C::input(n, 0));
  if (!start || !limit || !delta || start->size() != 1 || limit->size() != 1 || delta->size() != 1 ||
      (*delta)[0] == 0) {
    c.set(n.outputs[0], dtype, {unknown_dim()});
    return;
  }
  int64_t span = 0;
  if (__builtin_sub_overflow((*limit)[0], (*start)[0], &span)) return;
  const int64_t d = (*delta)[0];
  if (span == INT64_MIN && d == -1) return;  // the count does not fit
  if ((span > 0) != (d > 0) || span == 0) {
    c.set(n.outputs[0], dtype, {known_dim(0)});
    return;
  }
  // ceil(span / d) with span and d of one sign.
  const int64_t count = span / d + (span % d != 0 ? 1 : 0);
  c.set(n.outputs[0], dtype, {known_dim(count)});
}

void non_zero(const ir::Node& n, C& c) {
  auto x = c.shape(C::input(n, 0));
  if (x) c.set(n.outputs[0], DType::kInt64, {known_dim(static_cast<int64_t>(x->size())), unknown_dim()});
}

}  // namespace

void add_value_shape_rules(ShapeRuleTable& t) {
  t[{"", "Shape"}] = shape;
  t[{"", "Size"}] = size;
  t[{"", "Constant"}] = constant;
  t[{"", "ConstantOfShape"}] = constant_of_shape;
  t[{"", "NonZero"}] = non_zero;
  t[{"", "Range"}] = range;
}

}  // namespace loom::opreg
