#include "transform/symbolic_shapes.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "transform/graph_matcher.h"
#include "transform/symbolic_window.h"
#include "transform/type_precision.h"

namespace loom::transform {
namespace {

using Shape = std::vector<DimInfo>;

DimInfo known(int64_t v) { return DimInfo{v, ""}; }
DimInfo unknown() { return DimInfo{-1, ""}; }
bool same_dim(const DimInfo& a, const DimInfo& b) {
  if (a.value >= 0 || b.value >= 0) return a.value == b.value;
  return !anonymous_symbol(a.symbol) && a.symbol == b.symbol;
}

// numpy broadcasting of one dim pair, assuming the model is valid (a dim
// that is not 1 wins over an unknown one).
DimInfo broadcast_dim(const DimInfo& a, const DimInfo& b) {
  if (a.value == 1) return b;
  if (b.value == 1) return a;
  if (a.value >= 0) return a;
  if (b.value >= 0) return b;
  if (!anonymous_symbol(a.symbol) && (anonymous_symbol(b.symbol) || a.symbol == b.symbol)) return a;
  if (!anonymous_symbol(b.symbol) && anonymous_symbol(a.symbol)) return b;
  return unknown();
}

Shape broadcast(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const DimInfo da = i + a.size() >= rank ? a[i + a.size() - rank] : known(1);
    const DimInfo db = i + b.size() >= rank ? b[i + b.size() - rank] : known(1);
    out[i] = broadcast_dim(da, db);
  }
  return out;
}

int64_t attr_i(const ir::Node& n, const std::string& name, int64_t dflt) {
  const ir::Attribute* a = n.find_attribute(name);
  return a ? a->i : dflt;
}

// Element-wise ops whose output 0 has input 0's shape (and dtype unless noted).
const std::set<std::string> kSameShape = {
    "Relu",    "Erf",     "Sqrt",     "Neg",      "Exp",         "Log",         "Tanh",   "Sigmoid", "Abs",
    "Softmax", "Identity", "Reciprocal", "Floor", "Ceil",        "LeakyRelu",   "Elu",    "Gelu",    "HardSigmoid",
    "HardSwish", "Clip", "Cast",     "LogSoftmax", "LayerNormalization", "Dropout", "Not", "Sign", "Round",
    "FastGelu", "BiasGelu", "SkipLayerNormalization", "SimplifiedLayerNormalization", "QuickGelu"};
const std::set<std::string> kBroadcast = {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Equal", "Less",
                                          "Greater", "And", "Or", "Where", "Mod", "PRelu"};

class Propagator {
 public:
  explicit Propagator(ir::Graph& g) : g_(g) {
    for (const auto& [name, t] : g.initializers) {
      if ((t.dtype() != DType::kInt64 && t.dtype() != DType::kInt32) || t.element_count() > 64 || t.dims().size() > 1)
        continue;
      Shape v;
      for (int64_t i = 0; i < t.element_count(); ++i)
        v.push_back(known(t.dtype() == DType::kInt64 ? t.data_as<int64_t>()[i] : t.data_as<int32_t>()[i]));
      values_[name] = v;
    }
  }

  int run() {
    auto order = g_.topological_order();
    if (!order) return 0;
    for (const ir::Node* n : *order) visit(*n);
    return gained_;
  }

 private:
  const ir::ValueType* type(const std::string& v) const { return v.empty() ? nullptr : g_.type_of(v); }
  std::optional<Shape> shape(const std::string& v) const {
    const ir::ValueType* t = type(v);
    if (t == nullptr || !t->has_shape) return std::nullopt;
    return t->dims;
  }
  std::optional<Shape> value(const std::string& v) const {
    auto it = values_.find(v);
    if (it == values_.end()) return std::nullopt;
    return it->second;
  }
  std::optional<std::vector<int64_t>> ints(const std::string& v) const {
    auto s = value(v);
    if (!s) return std::nullopt;
    std::vector<int64_t> out;
    for (const DimInfo& d : *s) {
      if (d.value < 0) return std::nullopt;
      out.push_back(d.value);
    }
    return out;
  }
  // Constant int values may be negative (axes, -1 in shapes): read raw.
  std::optional<std::vector<int64_t>> const_ints(const std::string& v) const { return int_constant(g_, v); }

  void set(const std::string& v, DType dtype, Shape dims) {
    if (v.empty() || g_.is_initializer(v)) return;
    ir::ValueType now;
    now.dtype = dtype;
    now.has_shape = true;
    now.dims = std::move(dims);
    auto it = g_.value_types.find(v);
    if (it == g_.value_types.end()) {
      g_.value_types[v] = now;
      ++gained_;
    } else if (more_precise(now, it->second)) {
      it->second = now;
      ++gained_;
    }
  }
  // Input i of n, "" (an absent optional) past its last: nodes of opsets
  // newer than ONNX's registry knows reach here unverified, with any arity.
  static const std::string& input(const ir::Node& n, size_t i) {
    static const std::string kAbsent;
    return i < n.inputs.size() ? n.inputs[i] : kAbsent;
  }

  DType dtype_of(const std::string& v) const {
    const ir::ValueType* t = type(v);
    return t ? t->dtype : DType::kUndefined;
  }

  void visit(const ir::Node& n) {
    if (n.outputs.empty() || n.inputs.empty()) return;
    const std::string& op = n.op_type;
    const bool onnx = n.domain.empty();
    const bool ms = n.domain == "com.microsoft";
    if (!onnx && !ms) return;
    const std::string& out = n.outputs[0];
    // Shape-valued int tensors.
    if (onnx && op == "Shape") {
      if (auto s = shape(input(n, 0))) {
        int64_t r = static_cast<int64_t>(s->size());
        int64_t start = attr_i(n, "start", 0), end = attr_i(n, "end", r);
        if (start < 0) start += r;
        if (end < 0) end += r;
        start = std::clamp<int64_t>(start, 0, r);
        end = std::clamp<int64_t>(end, start, r);
        values_[out] = Shape(s->begin() + start, s->begin() + end);
        set(out, DType::kInt64, {known(end - start)});
      }
      return;
    }
    if (onnx && (op == "Gather") && value(input(n, 0)) && attr_i(n, "axis", 0) == 0) {
      auto idx = const_ints(input(n, 1));
      const Shape src = *value(input(n, 0));
      if (idx) {
        Shape picked;
        for (int64_t i : *idx) {
          const int64_t k = i < 0 ? i + static_cast<int64_t>(src.size()) : i;
          if (k < 0 || k >= static_cast<int64_t>(src.size())) return;
          picked.push_back(src[static_cast<size_t>(k)]);
        }
        values_[out] = picked;
      }
    }
    if (onnx && (op == "Unsqueeze" || op == "Squeeze" || op == "Cast" || op == "Identity") && value(input(n, 0)))
      values_[out] = *value(input(n, 0));
    if (onnx && op == "Concat" && attr_i(n, "axis", 0) == 0) {
      Shape all;
      bool ok = true;
      for (const std::string& in : n.inputs) {
        auto v = value(in);
        if (!v) {
          ok = false;
          break;
        }
        all.insert(all.end(), v->begin(), v->end());
      }
      if (ok) values_[out] = all;
    }
    tensor_shape(n);
  }

  // Output shapes of tensor ops from input shapes (and shape values).
  void tensor_shape(const ir::Node& n) {
    const std::string& op = n.op_type;
    const std::string& out = n.outputs[0];
    const DType dt = dtype_of(input(n, 0));
    auto x = shape(input(n, 0));
    if (kSameShape.count(op)) {
      if (!x) return;
      DType t = dt;
      if (op == "Cast") t = static_cast<DType>(attr_i(n, "to", 0));
      set(out, t, *x);
      if (op == "SkipLayerNormalization" && n.outputs.size() > 3) set(n.outputs[3], dt, *x);
      return;
    }
    if (kBroadcast.count(op)) {
      std::optional<Shape> acc;
      DType t = op == "Where" ? dtype_of(input(n, 1)) : dt;
      for (const std::string& in : n.inputs) {
        auto s = shape(in);
        if (!s) return;
        acc = acc ? broadcast(*acc, *s) : *s;
      }
      if (op == "Equal" || op == "Less" || op == "Greater" || op == "And" || op == "Or") t = DType::kBool;
      set(out, t, *acc);
      return;
    }
    if (op == "Reshape" && n.inputs.size() == 2 && x) {
      auto target = value(input(n, 1));
      auto raw = const_ints(input(n, 1));
      if (!target) return;
      Shape res;
      const bool allowzero = attr_i(n, "allowzero", 0) != 0;
      int minus_one = -1;
      for (size_t i = 0; i < target->size(); ++i) {
        const DimInfo& d = (*target)[i];
        const int64_t r = raw ? (*raw)[i] : d.value;
        if (r == 0 && !allowzero && raw) {
          if (i >= x->size()) return;
          res.push_back((*x)[i]);
        } else if (r == -1 && raw) {
          minus_one = static_cast<int>(i);
          res.push_back(unknown());
        } else {
          res.push_back(d);
        }
      }
      if (minus_one >= 0) {
        int64_t total = 1, rest = 1;
        bool all_known = true;
        for (const DimInfo& d : *x) all_known &= d.value >= 0, total *= std::max<int64_t>(d.value, 1);
        for (size_t i = 0; i < res.size(); ++i)
          if (static_cast<int>(i) != minus_one) all_known &= res[i].value >= 0, rest *= std::max<int64_t>(res[i].value, 1);
        if (all_known && rest > 0 && total % rest == 0) res[static_cast<size_t>(minus_one)] = known(total / rest);
      }
      set(out, dt, res);
      return;
    }
    if (op == "Gather" && x) {
      auto idx = shape(input(n, 1));
      if (!idx) return;
      int64_t axis = attr_i(n, "axis", 0);
      if (axis < 0) axis += static_cast<int64_t>(x->size());
      if (axis < 0 || axis >= static_cast<int64_t>(x->size())) return;
      Shape res(x->begin(), x->begin() + axis);
      res.insert(res.end(), idx->begin(), idx->end());
      res.insert(res.end(), x->begin() + axis + 1, x->end());
      set(out, dt, res);
      return;
    }
    if (op == "Slice" && x && n.inputs.size() >= 3) {
      auto starts = const_ints(input(n, 1));
      auto ends = value(input(n, 2));
      std::vector<int64_t> axes;
      if (n.inputs.size() > 3 && !input(n, 3).empty()) {
        auto a = const_ints(input(n, 3));
        if (!a) return;
        axes = *a;
      } else {
        for (size_t i = 0; starts && i < starts->size(); ++i) axes.push_back(static_cast<int64_t>(i));
      }
      if (n.inputs.size() > 4 && !input(n, 4).empty()) {
        auto steps = const_ints(input(n, 4));
        if (!steps) return;
        for (int64_t s : *steps)
          if (s != 1) return;
      }
      Shape res = *x;
      for (size_t k = 0; k < axes.size(); ++k) {
        int64_t a = axes[k] < 0 ? axes[k] + static_cast<int64_t>(x->size()) : axes[k];
        if (a < 0 || a >= static_cast<int64_t>(x->size())) return;
        DimInfo& d = res[static_cast<size_t>(a)];
        const bool from_zero = starts && k < starts->size() && (*starts)[k] == 0;
        const DimInfo* e = ends && k < ends->size() ? &(*ends)[k] : nullptr;
        if (from_zero && e && e->value < 0 && !anonymous_symbol(e->symbol)) {
          d = *e;  // x[:, :n] with n a dim of another tensor: assumed in range
        } else if (from_zero && e && e->value >= 0 && d.value >= 0) {
          d = known(std::min(e->value, d.value));
        } else {
          d = unknown();
        }
      }
      set(out, dt, res);
      return;
    }
    if (op == "FusedGemm" && x && x->size() == 2) {
      // com.microsoft FusedGemm (ONNX has no schema for it): Gemm's [M, N].
      auto w = shape(input(n, 1));
      if (!w || w->size() != 2) return;
      const DimInfo m = attr_i(n, "transA", 0) ? (*x)[1] : (*x)[0];
      const DimInfo cols = attr_i(n, "transB", 0) ? (*w)[0] : (*w)[1];
      set(out, dt, {m, cols});
      return;
    }
    if ((op == "MatMul" || op == "FusedMatMul" || op == "MatMulIntegerToFloat") && x) {
      auto w = shape(input(n, 1));
      if (!w || x->empty() || w->empty() || op == "FusedMatMul") return;
      Shape a = *x, b = *w;
      const bool av = a.size() == 1, bv = b.size() == 1;
      if (av) a.insert(a.begin(), known(1));
      if (bv) b.push_back(known(1));
      Shape batch = broadcast(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2));
      if (!av) batch.push_back(a[a.size() - 2]);
      if (!bv) batch.push_back(b.back());
      // MatMulIntegerToFloat (com.microsoft; ONNX has no schema for it): float from int8.
      set(out, op == "MatMulIntegerToFloat" ? DType::kFloat : dt, batch);
      return;
    }
    if (op == "Transpose" && x) {
      const ir::Attribute* p = n.find_attribute("perm");
      Shape res;
      if (p == nullptr) {
        res.assign(x->rbegin(), x->rend());
      } else {
        if (p->ints.size() != x->size()) return;
        for (int64_t k : p->ints) {
          if (k < 0 || k >= static_cast<int64_t>(x->size())) return;
          res.push_back((*x)[static_cast<size_t>(k)]);
        }
      }
      set(out, dt, res);
      return;
    }
    if (op.rfind("Reduce", 0) == 0 && x) {
      // Axes: attribute (before opset 18; ReduceSum from 13) or constant input.
      std::vector<int64_t> axes;
      if (const ir::Attribute* a = n.find_attribute("axes")) axes = a->ints;
      else if (n.inputs.size() > 1 && !input(n, 1).empty()) {
        auto c = const_ints(input(n, 1));
        if (!c) return;
        axes = *c;
      }
      const int64_t rank = static_cast<int64_t>(x->size());
      std::vector<bool> reduced(x->size(), axes.empty() && attr_i(n, "noop_with_empty_axes", 0) == 0);
      for (int64_t a : axes) {
        const int64_t k = a < 0 ? a + rank : a;
        if (k < 0 || k >= rank) return;
        reduced[static_cast<size_t>(k)] = true;
      }
      const bool keep = attr_i(n, "keepdims", 1) != 0;
      Shape res;
      for (size_t i = 0; i < x->size(); ++i) {
        if (!reduced[i]) res.push_back((*x)[i]);
        else if (keep) res.push_back(known(1));
      }
      set(out, dt, res);
      return;
    }
    if ((op == "Conv" || op == "FusedConv" || op == "MaxPool" || op == "AveragePool") && x) {
      if (auto res = window_output_shape(n, *x, shape(input(n, 1)))) set(out, dt, *res);
      return;
    }
    if (op == "Attention" && x && x->size() == 3) {
      auto w = shape(input(n, 1));
      const ir::Attribute* q = n.find_attribute("qkv_hidden_sizes");
      DimInfo hidden = unknown();
      if (q && q->ints.size() == 3) hidden = known(q->ints[2]);
      else if (w && w->size() == 2 && (*w)[1].value > 0 && (*w)[1].value % 3 == 0) hidden = known((*w)[1].value / 3);
      set(out, dt, {(*x)[0], (*x)[1], hidden});
    }
  }

  ir::Graph& g_;
  std::map<std::string, Shape> values_;
  int gained_ = 0;
};

}  // namespace

int propagate_symbolic_shapes(ir::Graph& graph) { return Propagator(graph).run(); }

}  // namespace loom::transform
