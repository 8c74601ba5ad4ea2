// Ops that move, select or join elements: Reshape, Flatten, Transpose,
// Squeeze, Unsqueeze, Concat, Expand, Tile, Slice, Gather. Where their
// input is a shape value (a Shape output or what is computed from one),
// Gather, Concat, Squeeze and Unsqueeze also carry that value, so that a
// Reshape reading it gets symbolic dims.
#include <algorithm>
#include <cstdint>

#include "ir/type_precision.h"
#include "opreg/infer/shape_rules.h"

namespace loom::opreg {
namespace {

using C = ShapeContext;


// The product of known dims, or nullopt (an unknown dim, or overflow).
std::optional<int64_t> product(const Shape& s, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i)
    if (s[i].value < 0 || !mul(p, s[i].value, &p)) return std::nullopt;
  return p;
}

void reshape(const ir::Node& n, C& c) {
  auto x = c.shape(C::input(n, 0));
  auto target = c.value(C::input(n, 1));
  if (!x || !target || n.inputs.size() != 2) return;
  auto raw = c.const_ints(C::input(n, 1));
  const bool allowzero = attr_int(n, "allowzero", 0) != 0;
  Shape res;
  int minus_one = -1;
  for (size_t i = 0; i < target->size(); ++i) {
    const DimInfo& d = (*target)[i];
    const int64_t r = raw && i < raw->size() ? (*raw)[i] : d.value;
    if (r == 0 && !allowzero) {  // 0 copies the input's dim
      if (i >= x->size()) return;
      res.push_back((*x)[i]);
    } else if (r == -1 && raw) {
      if (minus_one >= 0) return;  // two -1s: invalid
      minus_one = static_cast<int>(i);
      res.push_back(unknown_dim());
    } else if (r < -1) {
      return;
    } else {
      res.push_back(d);
    }
  }
  if (minus_one >= 0) {
    Shape rest = res;
    rest.erase(rest.begin() + minus_one);
    auto total = product(*x, 0, x->size());
    auto others = product(rest, 0, rest.size());
    if (total && others && *others > 0 && *total % *others == 0)
      res[static_cast<size_t>(minus_one)] = known_dim(*total / *others);
  }
  c.set(n.outputs[0], c.dtype_of(C::input(n, 0)), res);
}

void flatten(const ir::Node& n, C& c) {
  auto x = c.shape(C::input(n, 0));
  if (!x) return;
  const int64_t axis = attr_int(n, "axis", 1);
  const auto rank = static_cast<int64_t>(x->size());
  if (axis < -rank || axis > rank) return;
  const auto k = static_cast<size_t>(axis < 0 ? axis + rank : axis);
  auto outer = product(*x, 0, k), inner = product(*x, k, x->size());
  c.set(n.outputs[0], c.dtype_of(C::input(n, 0)),
        {outer ? known_dim(*outer) : unknown_dim(), inner ? known_dim(*inner) : unknown_dim()});
}

void transpose(const ir::Node& n, C& c) {
  auto x = c.shape(C::input(n, 0));
  if (!x) return;
  const ir::Attribute* p = n.find_attribute("perm");
  Shape res;
  if (p == nullptr) {
    res.assign(x->rbegin(), x->rend());
  } else {
    if (p->ints.size() != x->size()) return;
    std::vector<bool> seen(x->size(), false);
    for (int64_t k : p->ints) {
      if (k < 0 || k >= static_cast<int64_t>(x->size()) || seen[static_cast<size_t>(k)]) return;
      seen[static_cast<size_t>(k)] = true;
      res.push_back((*x)[static_cast<size_t>(k)]);
    }
  }
  c.set(n.outputs[0], c.dtype_of(C::input(n, 0)), res);
}

// Squeeze / Unsqueeze axes: the attribute (before opset 13) or input 1.
std::optional<std::vector<int64_t>> axes_of(const ir::Node& n, const C& c) {
  if (const ir::Attribute* a = n.find_attribute("axes")) return a->ints;
  if (C::input(n, 1).empty()) return std::vector<int64_t>{};
  return c.const_ints(C::input(n, 1));
}

void squeeze(const ir::Node& n, C& c) {
  if (auto v = c.value(C::input(n, 0))) c.set_value(n.outputs[0], *v);
  auto x = c.shape(C::input(n, 0));
  auto axes = axes_of(n, c);
  if (!x || !axes) return;
  std::vector<bool> drop(x->size(), false);
  if (axes->empty()) {
    for (size_t i = 0; i < x->size(); ++i) {
      if ((*x)[i].value < 0) return;  // an unknown dim may or may not be 1
      drop[i] = (*x)[i].value == 1;
    }
  }
  for (int64_t a : *axes) {
    auto k = normalize_axis(a, x->size());
    if (!k || ((*x)[*k].value >= 0 && (*x)[*k].value != 1)) return;
    drop[*k] = true;
  }
  Shape res;
  for (size_t i = 0; i < x->size(); ++i)
    if (!drop[i]) res.push_back((*x)[i]);
  c.set(n.outputs[0], c.dtype_of(C::input(n, 0)), res);
}

void unsqueeze(const ir::Node& n, C& c) {
  if (auto v = c.value(C::input(n, 0))) c.set_value(n.outputs[0], *v);
  auto x = c.shape(C::input(n, 0));
  auto axes = axes_of(n, c);
  if (!x || !axes || axes->empty()) return;
  const size_t rank = x->size() + axes->size();
  std::vector<bool> inserted(rank, false);
  for (int64_t a : *axes) {
    auto k = normalize_axis(a, rank);
    if (!k || inserted[*k]) return;
    inserted[*k] = true;
  }
  Shape res;
  size_t next = 0;
  for (size_t i = 0; i < rank; ++i) res.push_back(inserted[i] ? known_dim(1) : (*x)[next++]);
  c.set(n.outputs[0], c.dtype_of(C::input(n, 0)), res);
}

void concat(const ir::Node& n, C& c) {
  const int64_t axis = attr_int(n, "axis", 0);
  if (axis == 0) {
    Shape all;
    bool values = true;
    for (const std::string& in : n.inputs) {
      auto v = c.value(in);
      if (!v) {
        values = false;
        break;
      }
      all.insert(all.end(), v->begin(), v->end());
    }
    if (values) c.set_value(n.outputs[0], all);
  }
  std::optional<Shape> res;
  for (const std::string& in : n.inputs) {
    auto s = c.shape(in);
    if (!s) return;
    if (!res) {
      res = *s;
      continue;
    }
    if (s->size() != res->size()) return;
    auto k = normalize_axis(axis, res->size());
    if (!k) return;
    DimInfo& d = (*res)[*k];
    const DimInfo& add = (*s)[*k];
    if (d.value >= 0 && add.value >= 0 && !__builtin_add_overflow(d.value, add.value, &d.value)) continue;
    d = unknown_dim();
  }
  if (res) c.set(n.outputs[0], c.dtype_of(C::input(n, 0)), *res);
}

void expand(const ir::Node& n, C& c) {
  auto x = c.shape(C::input(n, 0));
  if (!x) return;
  if (auto target = c.value(C::input(n, 1))) {
    c.set(n.outputs[0], c.dtype_of(C::input(n, 0)), broadcast(*x, *target));
    return;
  }
  // Target values unknown, its length known: the rank only.
  if (auto k = rank_held(c.shape(C::input(n, 1))))
    c.set(n.outputs[0], c.dtype_of(C::input(n, 0)), Shape(std::max(x->size(), *k), unknown_dim()));
}

void tile(const ir::Node& n, C& c) {
  auto x = c.shape(C::input(n, 0));
  auto repeats = c.const_ints(C::input(n, 1));
  if (!x || !repeats || repeats->size() != x->size()) return;
  Shape res = *x;
  for (size_t i = 0; i < res.size(); ++i) {
    if ((*repeats)[i] < 0) return;
    if ((*repeats)[i] == 1) continue;
    if (res[i].value < 0 || !mul(res[i].value, (*repeats)[i], &res[i].value)) res[i] = unknown_dim();
  }
  c.set(n.outputs[0], c.dtype_of(C::input(n, 0)), res);
}

void gather(const ir::Node& n, C& c) {
  const int64_t axis = attr_int(n, "axis", 0);
  if (auto src = c.value(C::input(n, 0)); src && axis == 0) {
    if (auto idx = c.const_ints(C::input(n, 1))) {
      Shape picked;
      for (int64_t i : *idx) {
        auto k = normalize_axis(i, src->size());
        if (!k) return;
        picked.push_back((*src)[*k]);
      }
      c.set_value(n.outputs[0], picked);
    }
  }
  auto x = c.shape(C::input(n, 0));
  auto idx = c.shape(C::input(n, 1));
  if (!x || !idx) return;
  auto k = normalize_axis(axis, x->size());
  if (!k) return;
  Shape res(x->begin(), x->begin() + static_cast<std::ptrdiff_t>(*k));
  res.insert(res.end(), idx->begin(), idx->end());
  res.insert(res.end(), x->begin() + static_cast<std::ptrdiff_t>(*k) + 1, x->end());
  c.set(n.outputs[0], c.dtype_of(C::input(n, 0)), res);
}

// The length of dim `d` sliced from `start` to `end` by `step` (ONNX's
// clamping of out-of-range starts and ends).
int64_t sliced_length(int64_t d, int64_t start, int64_t end, int64_t step) {
  auto from = [d](int64_t v) { return v < 0 ? v + d : v; };  // v < 0 and d >= 0: no overflow
  if (d == 0) return 0;
  if (step > 0) {
    const int64_t s = std::clamp<int64_t>(from(start), 0, d), e = std::clamp<int64_t>(from(end), 0, d);
    return e > s ? (e - s - 1) / step + 1 : 0;
  }
  const int64_t s = std::clamp<int64_t>(from(start), 0, d - 1), e = std::clamp<int64_t>(from(end), -1, d - 1);
  const int64_t magnitude = step == INT64_MIN ? INT64_MAX : -step;
  return s > e ? (s - e - 1) / magnitude + 1 : 0;
}

// Slice: a dim of known size with constant starts and ends gets its exact
// length; one sliced by unit steps from 0 to an end that is the symbol of
// another dim gets that symbol; other slices make the dim unknown.
void slice(const ir::Node& n, C& c) {
  auto x = c.shape(C::input(n, 0));
  // Before opset 10, starts, ends and axes are attributes.
  const bool attrs = n.opset < 10;
  if (!x || (!attrs && n.inputs.size() < 3)) return;
  auto listed = [&n](const char* name) -> std::optional<std::vector<int64_t>> {
    const ir::Attribute* a = n.find_attribute(name);
    if (a == nullptr || a->type != ir::AttrType::kInts) return std::nullopt;
    return a->ints;
  };
  auto starts = attrs ? listed("starts") : c.const_ints(C::input(n, 1));
  auto const_ends = attrs ? listed("ends") : c.const_ints(C::input(n, 2));
  std::optional<Shape> ends;
  if (attrs && const_ends) {
    ends = Shape{};
    for (int64_t e : *const_ends) ends->push_back(e >= 0 ? known_dim(e) : unknown_dim());
  } else if (!attrs) {
    ends = c.value(C::input(n, 2));
  }
  std::vector<int64_t> axes;
  if (attrs && listed("axes")) {
    axes = *listed("axes");
  } else if (!attrs && !C::input(n, 3).empty()) {
    auto a = c.const_ints(C::input(n, 3));
    if (!a) return;
    axes = *a;
  } else {
    if (!starts) return;  // the axes are as many as the starts: unknown
    for (size_t i = 0; i < starts->size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  std::vector<int64_t> steps(axes.size(), 1);
  if (!attrs && !C::input(n, 4).empty()) {
    auto given = c.const_ints(C::input(n, 4));
    if (!given || given->size() != axes.size()) return;
    steps = *given;
  }
  // A slice of a shape value, by constants, is a shape value too.
  if (auto v = c.value(C::input(n, 0)); v && axes.size() == 1 && starts && const_ends && starts->size() == 1 &&
                                         const_ends->size() == 1 && steps[0] == 1 && x->size() == 1) {
    const auto len = static_cast<int64_t>(v->size());
    const int64_t b = std::clamp<int64_t>((*starts)[0] < 0 ? (*starts)[0] + len : (*starts)[0], 0, len);
    const int64_t e = std::clamp<int64_t>((*const_ends)[0] < 0 ? (*const_ends)[0] + len : (*const_ends)[0], 0, len);
    if (e > b) c.set_value(n.outputs[0], Shape(v->begin() + b, v->begin() + e));
  }
  Shape res = *x;
  for (size_t k = 0; k < axes.size(); ++k) {
    auto a = normalize_axis(axes[k], x->size());
    if (!a || steps[k] == 0) return;
    DimInfo& d = res[*a];
    if (starts && const_ends && k < starts->size() && k < const_ends->size() && d.value >= 0) {
      d = known_dim(sliced_length(d.value, (*starts)[k], (*const_ends)[k], steps[k]));
      continue;
    }
    if (steps[k] != 1) {
      d = unknown_dim();
      continue;
    }
    const bool from_zero = starts && k < starts->size() && (*starts)[k] == 0;
    const DimInfo* e = ends && k < ends->size() ? &(*ends)[k] : nullptr;
    if (from_zero && e && e->value < 0 && !ir::anonymous_symbol(e->symbol)) {
      d = *e;  // x[:, :n] with n a dim of another tensor: assumed in range
    } else if (from_zero && e && e->value >= 0 && d.value >= 0) {
      d = known_dim(std::min(e->value, d.value));
    } else {
      d = unknown_dim();
    }
  }
  c.set(n.outputs[0], c.dtype_of(C::input(n, 0)), res);
}

}  // namespace

void add_layout_shape_rules(ShapeRuleTable& t) {
  for (const char* d : {"", "com.microsoft"}) {
    t[{d, "Reshape"}] = reshape;
    t[{d, "Transpose"}] = transpose;
    t[{d, "Gather"}] = gather;
    t[{d, "Slice"}] = slice;
  }
  t[{"", "Flatten"}] = flatten;
  t[{"", "Squeeze"}] = squeeze;
  t[{"", "Unsqueeze"}] = unsqueeze;
  t[{"", "Concat"}] = concat;
  t[{"", "Expand"}] = expand;
  t[{"", "Tile"}] = tile;
}

}  // namespace loom::opreg
