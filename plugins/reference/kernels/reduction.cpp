// Reductions: ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare,
// ArgMax/ArgMin. The other members of the family (softmax, norms, losses,
// Det/Einsum) live in reduction_*.cpp and are registered from here.
#include <algorithm>
#include <cmath>
#include <limits>

#include "common/reduction_common.h"
#include "kernel_families.h"

namespace loom::reference {
namespace {

using sdk::KernelContext;

enum class ReduceOp { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

// Where the elements reduced into each output live. Adjacent dims with the
// same kept/reduced status are merged first; when the innermost merged dim is
// reduced it becomes a contiguous run of `run` elements, so reducing a whole
// tensor needs no offset tables.
struct ReducePlan {
  Shape out_shape;
  std::vector<int64_t> bases;    // input offset of each output's first element
  std::vector<int64_t> offsets;  // offsets of the reduced runs, relative to a base
  int64_t run = 1;               // contiguous elements per run
  int64_t count = 0;             // elements reduced into each output
};

ReducePlan make_plan(const Shape& in, const std::vector<bool>& reduced, bool keepdims) {
  ReducePlan p;
  for (size_t d = 0; d < in.size(); ++d) {
    if (!reduced[d])
      p.out_shape.push_back(in[d]);
    else if (keepdims)
      p.out_shape.push_back(1);
  }
  // Merge adjacent dims of equal status.
  std::vector<int64_t> dims;
  std::vector<bool> red;
  for (size_t d = 0; d < in.size(); ++d) {
    if (!dims.empty() && red.back() == reduced[d]) {
      dims.back() *= in[d];
    } else {
      dims.push_back(in[d]);
      red.push_back(reduced[d]);
    }
  }
  if (!dims.empty() && red.back()) {
    p.run = dims.back();
    dims.pop_back();
    red.pop_back();
  }
  const Shape st = strides_of(dims);
  // Enumerate offsets of kept (bases) and reduced (offsets) dims in row-major order.
  auto enumerate = [&](bool want, std::vector<int64_t>& out) {
    out.assign(1, 0);
    for (size_t d = 0; d < dims.size(); ++d) {
      if (red[d] != want) continue;
      std::vector<int64_t> next;
      next.reserve(out.size() * static_cast<size_t>(dims[d]));
      for (int64_t base : out)
        for (int64_t k = 0; k < dims[d]; ++k) next.push_back(base + k * st[d] * p.run);
      out.swap(next);
    }
  };
  enumerate(false, p.bases);
  enumerate(true, p.offsets);
  p.count = static_cast<int64_t>(p.offsets.size()) * p.run;
  return p;
}

template <class T>
void reduce_typed(ReduceOp op, const T* x, T* y, const ReducePlan& p) {
  using A = acc_t<T>;
  const int64_t n_out = static_cast<int64_t>(p.bases.size());
  for (int64_t o = 0; o < n_out; ++o) {
    // An empty reduction set reads nothing: X may then be empty (no data,
    // a null pointer) while Y is not, so no offset is applied to it.
    const T* base = p.offsets.empty() ? x : x + p.bases[static_cast<size_t>(o)];
    auto each = [&](auto&& f) {
      for (int64_t off : p.offsets) {
        const T* q = base + off;
        for (int64_t l = 0; l < p.run; ++l) f(q[l]);
      }
    };
    double real = 0;  // result for the ops computed in double
    A acc = 0;        // result for the ops computed in A
    bool use_real = false;
    switch (op) {
      case ReduceOp::kSum:
        each([&](T v) { acc += static_cast<A>(v); });
        break;
      case ReduceOp::kMean:
        each([&](T v) { acc += static_cast<A>(v); });
        if constexpr (is_float_v<T>) {
          acc = p.count == 0 ? std::numeric_limits<double>::quiet_NaN() : acc / static_cast<A>(p.count);
        } else {
          acc = p.count == 0 ? A(0) : static_cast<A>(acc / static_cast<A>(p.count));
        }
        break;
      case ReduceOp::kSumSquare:
        each([&](T v) { acc += static_cast<A>(v) * static_cast<A>(v); });
        break;
      case ReduceOp::kL1:
        each([&](T v) {
          const A a = static_cast<A>(v);
          if constexpr (std::is_signed_v<A>)
            acc += a < 0 ? A(-a) : a;
          else
            acc += a;
        });
        break;
      case ReduceOp::kProd:
        acc = 1;
        each([&](T v) { acc *= static_cast<A>(v); });
        break;
      case ReduceOp::kMax:
      case ReduceOp::kMin: {
        const bool is_max = op == ReduceOp::kMax;
        if constexpr (is_float_v<T>)
          acc = is_max ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
        else
          acc = is_max ? std::numeric_limits<A>::lowest() : std::numeric_limits<A>::max();
        bool nan = false;
        each([&](T v) {
          const A a = static_cast<A>(v);
          if (is_nan_value(a)) nan = true;
          else if (is_max ? a > acc : a < acc) acc = a;
        });
        if constexpr (is_float_v<T>)
          if (nan) acc = std::numeric_limits<double>::quiet_NaN();
        break;
      }
      case ReduceOp::kL2:
        use_real = true;
        each([&](T v) {
          const double d = static_cast<double>(v);
          real += d * d;
        });
        real = std::sqrt(real);
        break;
      case ReduceOp::kLogSum:
        use_real = true;
        each([&](T v) { real += static_cast<double>(v); });
        real = std::log(real);
        break;
      case ReduceOp::kLogSumExp: {
        use_real = true;
        double m = -std::numeric_limits<double>::infinity();
        each([&](T v) { m = std::max(m, static_cast<double>(v)); });
        if (std::isinf(m)) {  // empty set, all -inf, or +inf present
          each([&](T v) { real += std::exp(static_cast<double>(v)); });
          real = std::log(real);
        } else {
          each([&](T v) { real += std::exp(static_cast<double>(v) - m); });
          real = std::log(real) + m;
        }
        break;
      }
    }
    y[o] = use_real ? to_elem<T>(real) : to_elem<T>(acc);
  }
}

class ReduceKernel {
 public:
  ReduceKernel(const sdk::Node& node, ReduceOp op, std::string_view name, int axes_input_since)
      : op_(op), name_(name) {
    keepdims_ = node.attr_int("keepdims", 1) != 0;
    axes_from_input_ = node.opset() >= axes_input_since;
    noop_with_empty_axes_ = node.attr_int("noop_with_empty_axes", 0) != 0;
    if (!axes_from_input_) attr_axes_ = node.attr_ints("axes");
  }

  void compute(KernelContext& ctx) const {
    const sdk::ConstTensor x = ctx.required_input(0);
    const Shape in = x.shape();
    const int64_t rank = static_cast<int64_t>(in.size());
    std::vector<int64_t> axes = attr_axes_;
    if (axes_from_input_) {
      const sdk::ConstTensor a = ctx.input(1);
      axes = a.exists() ? a.to_int64_vector() : std::vector<int64_t>{};
    }
    std::vector<bool> reduced(in.size(), false);
    if (axes.empty()) {
      // Reduce everything, or (noop_with_empty_axes) nothing: each output
      // then reduces its single element.
      if (!(axes_from_input_ && noop_with_empty_axes_)) std::fill(reduced.begin(), reduced.end(), true);
    } else {
      for (int64_t a : axes) {
        const int64_t ax = normalize_axis(a, rank, name_);
        if (reduced[static_cast<size_t>(ax)])
          sdk::fail_invalid(name_ + ": axis " + std::to_string(a) + " is repeated in 'axes'");
        reduced[static_cast<size_t>(ax)] = true;
      }
    }
    const ReducePlan plan = make_plan(in, reduced, keepdims_);
    // ReduceMax/Min-20 take bool too: any and all.
    if (x.dtype() == LOOM_DTYPE_BOOL && (op_ == ReduceOp::kMax || op_ == ReduceOp::kMin)) {
      sdk::Tensor out = ctx.output(0, plan.out_shape, x.dtype());
      if (out.size() > 0) reduce_typed<bool>(op_, x.data<bool>(), out.mutable_data<bool>(), plan);
      return;
    }
    using Types = TypeList<float, double, Float16, BFloat16, int32_t, int64_t, uint32_t, uint64_t,
                           int8_t, uint8_t>;
    dispatch<Types>(x.dtype(), name_, [&](auto tag) {
      using T = decltype(tag);
      sdk::Tensor out = ctx.output(0, plan.out_shape, x.dtype());
      if (out.size() == 0) return;
      reduce_typed<T>(op_, x.data<T>(), out.mutable_data<T>(), plan);
    });
  }

 private:
  ReduceOp op_;
  std::string name_;
  bool keepdims_ = true;
  bool axes_from_input_ = false;
  bool noop_with_empty_axes_ = false;
  std::vector<int64_t> attr_axes_;
};

// One registrable class per op (add_class needs a K(const Node&) constructor).
template <ReduceOp kOp, int kAxesInputSince>
struct Reduce : ReduceKernel {
  static const char* op_name() {
    switch (kOp) {
      case ReduceOp::kSum: return "ReduceSum";
      case ReduceOp::kMean: return "ReduceMean";
      case ReduceOp::kMax: return "ReduceMax";
      case ReduceOp::kMin: return "ReduceMin";
      case ReduceOp::kProd: return "ReduceProd";
      case ReduceOp::kL1: return "ReduceL1";
      case ReduceOp::kL2: return "ReduceL2";
      case ReduceOp::kLogSum: return "ReduceLogSum";
      case ReduceOp::kLogSumExp: return "ReduceLogSumExp";
      case ReduceOp::kSumSquare: return "ReduceSumSquare";
    }
    return "Reduce";
  }
  explicit Reduce(const sdk::Node& node) : ReduceKernel(node, kOp, op_name(), kAxesInputSince) {}
};

// ArgMax / ArgMin (opsets 1..13): int64 indices along `axis`; ties pick the
// first index, or the last with select_last_index (opset 12+). NaN wins.
class ArgKernel {
 public:
  ArgKernel(const sdk::Node& node, bool is_max) : is_max_(is_max), name_(is_max ? "ArgMax" : "ArgMin") {
    axis_ = node.attr_int("axis", 0);
    keepdims_ = node.attr_int("keepdims", 1) != 0;
    select_last_ = node.attr_int("select_last_index", 0) != 0;
  }

  void compute(KernelContext& ctx) const {
    const sdk::ConstTensor x = ctx.required_input(0);
    const Shape in = x.shape();
    const int64_t axis = normalize_axis(axis_, static_cast<int64_t>(in.size()), name_);
    const AxisView v(in, axis);
    Shape out_shape = in;
    if (keepdims_)
      out_shape[static_cast<size_t>(axis)] = 1;
    else
      out_shape.erase(out_shape.begin() + axis);
    if (v.n == 0 && v.outer * v.inner > 0)
      sdk::fail_invalid(name_ + ": cannot reduce over axis " + std::to_string(axis_) + " of size 0");
    dispatch<NumericTypes>(x.dtype(), name_, [&](auto tag) {
      using T = decltype(tag);
      using C = compute_t<T>;
      const T* px = x.data<T>();
      sdk::Tensor out = ctx.output(0, out_shape, LOOM_DTYPE_INT64);
      if (out.size() == 0) return;
      int64_t* py = out.mutable_data<int64_t>();
      for (int64_t o = 0; o < v.outer; ++o) {
        for (int64_t i = 0; i < v.inner; ++i) {
          const T* p = px + o * v.n * v.inner + i;
          int64_t best = 0;
          C bv = static_cast<C>(p[0]);
          for (int64_t k = 1; k < v.n; ++k) {
            const C c = static_cast<C>(p[k * v.inner]);
            if (is_nan_value(bv)) {
              if (select_last_ && is_nan_value(c)) best = k;
              continue;
            }
            bool take;
            if (is_nan_value(c))
              take = true;
            else if (select_last_)
              take = is_max_ ? c >= bv : c <= bv;
            else
              take = is_max_ ? c > bv : c < bv;
            if (take) {
              best = k;
              bv = c;
            }
          }
          py[o * v.inner + i] = best;
        }
      }
    });
  }

 private:
  bool is_max_;
  std::string name_;
  int64_t axis_ = 0;
  bool keepdims_ = true;
  bool select_last_ = false;
};

struct ArgMax : ArgKernel {
  explicit ArgMax(const sdk::Node& n) : ArgKernel(n, true) {}
};
struct ArgMin : ArgKernel {
  explicit ArgMin(const sdk::Node& n) : ArgKernel(n, false) {}
};

}  // namespace

void register_reduction_kernels(sdk::KernelRegistry& r) {
  constexpr int kOpen = LOOM_OPSET_OPEN_END;
  // ReduceSum takes axes as an input from opset 13, the others from 18.
  r.add_class<Reduce<ReduceOp::kSum, 13>>("", "ReduceSum", 1, kOpen);
  r.add_class<Reduce<ReduceOp::kMean, 18>>("", "ReduceMean", 1, kOpen);
  r.add_class<Reduce<ReduceOp::kMax, 18>>("", "ReduceMax", 1, kOpen);
  r.add_class<Reduce<ReduceOp::kMin, 18>>("", "ReduceMin", 1, kOpen);
  r.add_class<Reduce<ReduceOp::kProd, 18>>("", "ReduceProd", 1, kOpen);
  r.add_class<Reduce<ReduceOp::kL1, 18>>("", "ReduceL1", 1, kOpen);
  r.add_class<Reduce<ReduceOp::kL2, 18>>("", "ReduceL2", 1, kOpen);
  r.add_class<Reduce<ReduceOp::kLogSum, 18>>("", "ReduceLogSum", 1, kOpen);
  r.add_class<Reduce<ReduceOp::kLogSumExp, 18>>("", "ReduceLogSumExp", 1, kOpen);
  r.add_class<Reduce<ReduceOp::kSumSquare, 18>>("", "ReduceSumSquare", 1, kOpen);
  r.add_class<ArgMax>("", "ArgMax", 1, kOpen);
  r.add_class<ArgMin>("", "ArgMin", 1, kOpen);

  register_reduction_softmax_kernels(r);
  register_reduction_norm_kernels(r);
  register_reduction_norm_recent_kernels(r);
  register_reduction_loss_kernels(r);
  register_reduction_linalg_kernels(r);
}

}  // namespace loom::reference
