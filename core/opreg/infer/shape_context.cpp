#include "opreg/infer/shape_context.h"

#include <algorithm>

#include "ir/type_precision.h"

namespace loom::opreg {
namespace {

// Int tensors at most this long are tracked as values (shapes, axes).
constexpr int64_t kMaxTrackedInts = 64;

DimInfo broadcast_dim(const DimInfo& a, const DimInfo& b) {
  if (a.value == 1) return b;
  if (b.value == 1) return a;
  if (a.value >= 0) return a;
  if (b.value >= 0) return b;
  if (!ir::anonymous_symbol(a.symbol) && (ir::anonymous_symbol(b.symbol) || a.symbol == b.symbol)) return a;
  if (!ir::anonymous_symbol(b.symbol) && ir::anonymous_symbol(a.symbol)) return b;
  return unknown_dim();
}

}  // namespace

std::optional<std::vector<int64_t>> small_int_values(const Tensor& t) {
  if ((t.dtype() != DType::kInt64 && t.dtype() != DType::kInt32) || t.element_count() > kMaxTrackedInts ||
      t.dims().size() > 1)
    return std::nullopt;
  std::vector<int64_t> out;
  for (int64_t i = 0; i < t.element_count(); ++i)
    out.push_back(t.dtype() == DType::kInt64 ? t.data_as<int64_t>()[i] : t.data_as<int32_t>()[i]);
  return out;
}

ShapeContext::ShapeContext(ir::Graph& graph) : g_(graph) {
  for (const auto& [name, t] : graph.initializers) {
    if (graph.is_graph_input(name)) continue;  // a default the caller may replace
    if (auto ints = small_int_values(t)) {
      Shape v;
      for (int64_t i : *ints) v.push_back(known_dim(i));
      values_[name] = std::move(v);
    }
  }
}

const std::string& ShapeContext::input(const ir::Node& n, size_t i) {
  static const std::string kAbsent;
  return i < n.inputs.size() ? n.inputs[i] : kAbsent;
}

std::optional<Shape> ShapeContext::shape(const std::string& v) const {
  if (v.empty()) return std::nullopt;
  if (const ir::ValueType* t = g_.type_of(v)) {
    if (t->kind != ValueKind::kTensor || !t->has_shape) return std::nullopt;
    return t->dims;
  }
  const Tensor* init = g_.initializer_in_scope(v);
  if (init == nullptr) return std::nullopt;
  Shape dims;
  for (int64_t d : init->dims()) dims.push_back(known_dim(d));
  return dims;
}

DType ShapeContext::dtype_of(const std::string& v) const { return ir::tensor_element_type(g_, v); }

std::optional<Shape> ShapeContext::value(const std::string& v) const {
  auto it = values_.find(v);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

void ShapeContext::set_value(const std::string& v, Shape dims) {
  if (!v.empty() && static_cast<int64_t>(dims.size()) <= kMaxTrackedInts) values_[v] = std::move(dims);
}

std::optional<std::vector<int64_t>> ShapeContext::const_ints(const std::string& v) const {
  if (auto it = constants_.find(v); it != constants_.end()) return it->second;
  return ir::int_constant(g_, v);
}

void ShapeContext::set_constant(const std::string& v, std::vector<int64_t> ints) {
  if (v.empty() || static_cast<int64_t>(ints.size()) > kMaxTrackedInts) return;
  Shape dims;
  for (int64_t i : ints) dims.push_back(known_dim(i));
  values_[v] = std::move(dims);
  constants_[v] = std::move(ints);
}

std::optional<std::vector<float>> ShapeContext::const_floats(const std::string& v) const {
  if (auto it = float_constants_.find(v); it != float_constants_.end()) return it->second;
  auto it = g_.initializers.find(v);
  if (it == g_.initializers.end() || g_.is_graph_input(v) || it->second.dtype() != DType::kFloat ||
      it->second.element_count() > kMaxTrackedInts)
    return std::nullopt;
  const float* data = it->second.data_as<float>();
  return std::vector<float>(data, data + it->second.element_count());
}

void ShapeContext::set_float_constant(const std::string& v, std::vector<float> floats) {
  if (!v.empty() && static_cast<int64_t>(floats.size()) <= kMaxTrackedInts) float_constants_[v] = std::move(floats);
}

void ShapeContext::set(const std::string& v, DType dtype, Shape dims) {
  if (v.empty() || g_.is_initializer(v)) return;
  for (const DimInfo& d : dims)
    if (d.value < -1) return;  // a negative size is the model's error, not a shape
  ir::ValueType now;
  now.dtype = dtype;
  now.has_shape = true;
  now.dims = std::move(dims);
  auto it = g_.value_types.find(v);
  if (it == g_.value_types.end()) {
    g_.value_types[v] = std::move(now);
    ++gained_;
    return;
  }
  // A known element type the rule could not tell is kept.
  if (now.dtype == DType::kUndefined && it->second.kind == ValueKind::kTensor) now.dtype = it->second.dtype;
  if (ir::more_precise(now, it->second)) {
    it->second = std::move(now);
    ++gained_;
  }
}

void ShapeContext::set_dtype(const std::string& v, DType dtype) {
  if (ir::gain_element_type(g_, v, dtype)) ++gained_;
}

std::optional<size_t> rank_held(const std::optional<Shape>& s) {
  constexpr int64_t kMaxRank = 64;
  if (!s || s->size() != 1 || (*s)[0].value < 0 || (*s)[0].value > kMaxRank) return std::nullopt;
  return static_cast<size_t>((*s)[0].value);
}

int64_t attr_int(const ir::Node& n, const std::string& name, int64_t fallback) {
  const ir::Attribute* a = n.find_attribute(name);
  return a != nullptr && a->type == ir::AttrType::kInt ? a->i : fallback;
}

std::vector<int64_t> attr_ints(const ir::Node& n, const std::string& name) {
  const ir::Attribute* a = n.find_attribute(name);
  return a != nullptr && a->type == ir::AttrType::kInts ? a->ints : std::vector<int64_t>{};
}

Shape broadcast(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const DimInfo da = i + a.size() >= rank ? a[i + a.size() - rank] : known_dim(1);
    const DimInfo db = i + b.size() >= rank ? b[i + b.size() - rank] : known_dim(1);
    out[i] = broadcast_dim(da, db);
  }
  return out;
}

std::optional<size_t> normalize_axis(int64_t axis, size_t rank) {
  const auto r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r) return std::nullopt;
  return static_cast<size_t>(axis < 0 ? axis + r : axis);
}

}  // namespace loom::opreg
