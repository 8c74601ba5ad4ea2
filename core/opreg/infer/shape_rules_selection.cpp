// Ops that pick, split or scatter elements: Split, TopK, GatherElements,
// ScatterElements / ScatterND, OneHot, ReverseSequence.
#include <algorithm>
#include <cstdint>

#include "opreg/infer/shape_rules.h"

namespace loom::opreg {
namespace {

using C = ShapeContext;

// Split along `axis` into the given sizes (input 1 from opset 13, the
// attribute before) or, without them, into equal parts (the last smaller
// from opset 18's num_outputs).
void split(const ir::Node& n, C& c) {
  auto x = c.shape(C::input(n, 0));
  if (!x) return;
  auto axis = normalize_axis(attr_int(n, "axis", 0), x->size());
  if (!axis) return;
  std::optional<std::vector<int64_t>> sizes;
  if (const ir::Attribute* a = n.find_attribute("split"); a != nullptr && a->type == ir::AttrType::kInts) sizes = a->ints;
  else if (!C::input(n, 1).empty()) sizes = c.const_ints(C::input(n, 1));
  else sizes = std::vector<int64_t>{};
  if (!sizes) return;
  const size_t parts = n.outputs.size();
  const int64_t whole = (*x)[*axis].value;
  if (sizes->empty()) {
    if (whole < 0 || parts == 0) return;
    const auto count = static_cast<int64_t>(parts);
    const int64_t each = whole / count + (whole % count != 0 ? 1 : 0);
    for (size_t j = 0; j < parts; ++j) {
      const int64_t begin = each * static_cast<int64_t>(j);  // <= whole + each: no overflow
      sizes->push_back(std::max<int64_t>(0, std::min(each, whole - begin)));
    }
    if (n.find_attribute("num_outputs") == nullptr && whole % count != 0) return;  // before 18: equal parts only
  }
  if (sizes->size() != parts) return;
  for (size_t j = 0; j < parts; ++j) {
    if ((*sizes)[j] < 0) return;
    Shape s = *x;
    s[*axis] = known_dim((*sizes)[j]);
    c.set(n.outputs[j], c.dtype_of(C::input(n, 0)), s);
  }
}

// TopK: the axis dim becomes k (a constant input from opset 10, the
// attribute before); values and int64 indices.
void top_k(const ir::Node& n, C& c) {
  auto x = c.shape(C::input(n, 0));
  if (!x) return;
  auto axis = normalize_axis(attr_int(n, "axis", -1), x->size());
  if (!axis) return;
  DimInfo k = unknown_dim();
  if (n.opset < 10) {
    if (const int64_t v = attr_int(n, "k", -1); v >= 0) k = known_dim(v);
  } else if (auto v = c.const_ints(C::input(n, 1)); v && v->size() == 1 && (*v)[0] >= 0) {
    k = known_dim((*v)[0]);
  }
  Shape s = *x;
  s[*axis] = k;
  c.set(n.outputs[0], c.dtype_of(C::input(n, 0)), s);
  if (n.outputs.size() > 1) c.set(n.outputs[1], DType::kInt64, s);
}

void gather_elements(const ir::Node& n, C& c) {
  if (auto idx = c.shape(C::input(n, 1))) c.set(n.outputs[0], c.dtype_of(C::input(n, 0)), *idx);
}

void like_data(const ir::Node& n, C& c) {
  if (auto x = c.shape(C::input(n, 0))) c.set(n.outputs[0], c.dtype_of(C::input(n, 0)), *x);
}

// OneHot: the indices' shape with the (constant) depth inserted at `axis`.
void one_hot(const ir::Node& n, C& c) {
  auto idx = c.shape(C::input(n, 0));
  if (!idx) return;
  auto axis = normalize_axis(attr_int(n, "axis", -1), idx->size() + 1);
  if (!axis) return;
  DimInfo depth = unknown_dim();
  if (auto d = c.const_ints(C::input(n, 1)); d && d->size() == 1 && (*d)[0] >= 0) depth = known_dim((*d)[0]);
  Shape s = *idx;
  s.insert(s.begin() + static_cast<std::ptrdiff_t>(*axis), depth);
  c.set(n.outputs[0], c.dtype_of(C::input(n, 2)), s);
}

// Unique: Y is 1-D (no axis) or X's rank with the axis' length unknown;
// indices and counts are 1-D of the unique count; inverse_indices has one
// entry per element of X (no axis) or per slice along the axis.
void unique(const ir::Node& n, C& c) {
  auto x = c.shape(C::input(n, 0));
  if (!x) return;
  const ir::Attribute* axis_attr = n.find_attribute("axis");
  std::optional<size_t> axis;
  if (axis_attr != nullptr) {
    axis = normalize_axis(axis_attr->i, x->size());
    if (!axis) return;
  }
  Shape y{unknown_dim()};
  DimInfo inverse = unknown_dim();
  if (axis) {
    y = *x;
    y[*axis] = unknown_dim();
    inverse = (*x)[*axis];
  } else {
    int64_t count = 1;
    for (const DimInfo& d : *x)
      if (count >= 0 && (d.value < 0 || !mul(count, d.value, &count))) count = -1;
    if (count >= 0) inverse = known_dim(count);
  }
  c.set(n.outputs[0], c.dtype_of(C::input(n, 0)), y);
  for (size_t j = 1; j < n.outputs.size() && j < 4; ++j)
    c.set(n.outputs[j], DType::kInt64, {j == 2 ? inverse : unknown_dim()});
}

}  // namespace

void add_selection_shape_rules(ShapeRuleTable& t) {
  t[{"", "Unique"}] = unique;
  t[{"", "Split"}] = split;
  t[{"", "TopK"}] = top_k;
  t[{"", "GatherElements"}] = gather_elements;
  for (const char* op : {"ScatterElements", "ScatterND", "Scatter", "ReverseSequence"}) t[{"", op}] = like_data;
  t[{"", "OneHot"}] = one_hot;
}

}  // namespace loom::opreg
