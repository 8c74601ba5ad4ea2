// Softmax, LogSoftmax, Hardmax (along one axis), CumSum, CumProd and TopK.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "common/reduction_common.h"

namespace loom::reference {
namespace {

using sdk::KernelContext;

enum class SoftmaxKind { kSoftmax, kLogSoftmax, kHardmax };

// Before opset 13 the input is coerced to 2-D [prod(dims[:axis]),
// prod(dims[axis:])] (default axis 1) and the op runs over the second dim;
// from 13 it runs along `axis` (default -1).
class SoftmaxKernel {
 public:
  SoftmaxKernel(const sdk::Node& node, SoftmaxKind kind, std::string_view name)
      : kind_(kind), name_(name) {
    coerce_2d_ = node.opset() < 13;
    axis_ = node.attr_int("axis", coerce_2d_ ? 1 : -1);
  }

  void compute(KernelContext& ctx) const {
    const sdk::ConstTensor x = ctx.required_input(0);
    const Shape in = x.shape();
    const int64_t rank = static_cast<int64_t>(in.size());
    AxisView v;
    if (rank == 0) {
      v = AxisView();  // a scalar is one row of one element
    } else if (coerce_2d_) {
      // axis == rank is allowed by the old coercion rule ([N, 1] view).
      const int64_t axis = axis_ == rank ? rank : normalize_axis(axis_, rank, name_);
      v.outer = dims_product(in, 0, static_cast<size_t>(axis));
      v.n = dims_product(in, static_cast<size_t>(axis), in.size());
      v.inner = 1;
    } else {
      v = AxisView(in, normalize_axis(axis_, rank, name_));
    }
    dispatch<FloatTypes>(x.dtype(), name_, [&](auto tag) {
      using T = decltype(tag);
      const T* px = x.data<T>();
      sdk::Tensor out = ctx.output(0, in, x.dtype());
      if (out.size() == 0) return;
      T* py = out.mutable_data<T>();
      std::vector<double> row(static_cast<size_t>(v.n));
      for (int64_t o = 0; o < v.outer; ++o) {
        for (int64_t i = 0; i < v.inner; ++i) {
          const int64_t base = o * v.n * v.inner + i;
          for (int64_t k = 0; k < v.n; ++k) row[static_cast<size_t>(k)] = static_cast<double>(px[base + k * v.inner]);
          apply(row);
          for (int64_t k = 0; k < v.n; ++k) py[base + k * v.inner] = to_elem<T>(row[static_cast<size_t>(k)]);
        }
      }
    });
  }

 private:
  void apply(std::vector<double>& row) const {
    if (row.empty()) return;
    if (kind_ == SoftmaxKind::kHardmax) {
      size_t best = 0;
      for (size_t k = 1; k < row.size(); ++k)
        if (row[k] > row[best]) best = k;
      for (size_t k = 0; k < row.size(); ++k) row[k] = k == best ? 1.0 : 0.0;
      return;
    }
    const double m = *std::max_element(row.begin(), row.end());
    double sum = 0;
    for (double& r : row) {
      r -= m;
      sum += std::exp(r);
    }
    if (kind_ == SoftmaxKind::kSoftmax) {
      for (double& r : row) r = std::exp(r) / sum;
    } else {
      const double log_sum = std::log(sum);
      for (double& r : row) r -= log_sum;
    }
  }

  SoftmaxKind kind_;
  std::string name_;
  bool coerce_2d_ = false;
  int64_t axis_ = -1;
};

struct Softmax : SoftmaxKernel {
  explicit Softmax(const sdk::Node& n) : SoftmaxKernel(n, SoftmaxKind::kSoftmax, "Softmax") {}
};
struct LogSoftmax : SoftmaxKernel {
  explicit LogSoftmax(const sdk::Node& n) : SoftmaxKernel(n, SoftmaxKind::kLogSoftmax, "LogSoftmax") {}
};
struct Hardmax : SoftmaxKernel {
  explicit Hardmax(const sdk::Node& n) : SoftmaxKernel(n, SoftmaxKind::kHardmax, "Hardmax") {}
};

// CumSum (11, 14) and CumProd (26): axis is input 1 (a 0-D or 1-element
// int32/int64 tensor). Integer products wrap around like numpy's (computed
// in uint64, so an overflow is never undefined behaviour).
template <bool kProduct>
void cumulative(KernelContext& ctx) {
  const std::string op = kProduct ? "CumProd" : "CumSum";
  const sdk::ConstTensor x = ctx.required_input(0);
  const sdk::ConstTensor axis_t = ctx.required_input(1);
  const bool exclusive = ctx.node().attr_int("exclusive", 0) != 0;
  const bool reverse = ctx.node().attr_int("reverse", 0) != 0;
  const Shape in = x.shape();
  if (in.empty()) sdk::fail_invalid(op + ": input must have rank >= 1");
  const int64_t axis = normalize_axis(scalar_int_input(axis_t, op, "axis"), static_cast<int64_t>(in.size()), op);
  const AxisView v(in, axis);
  using Types = TypeList<float, double, Float16, BFloat16, int32_t, int64_t, uint32_t, uint64_t>;
  dispatch<Types>(x.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    using A = acc_t<T>;
    auto combine = [](A acc, A value) -> A {
      if constexpr (!kProduct) return acc + value;
      else if constexpr (std::is_integral_v<A>)
        return static_cast<A>(static_cast<uint64_t>(acc) * static_cast<uint64_t>(value));
      else
        return acc * value;
    };
    const T* px = x.data<T>();
    sdk::Tensor out = ctx.output(0, in, x.dtype());
    if (out.size() == 0) return;
    T* py = out.mutable_data<T>();
    for (int64_t o = 0; o < v.outer; ++o) {
      for (int64_t i = 0; i < v.inner; ++i) {
        const int64_t base = o * v.n * v.inner + i;
        A acc = kProduct ? A(1) : A(0);
        for (int64_t j = 0; j < v.n; ++j) {
          const int64_t k = reverse ? v.n - 1 - j : j;
          const int64_t at = base + k * v.inner;
          if (exclusive) {
            py[at] = to_elem<T>(acc);
            acc = combine(acc, static_cast<A>(px[at]));
          } else {
            acc = combine(acc, static_cast<A>(px[at]));
            py[at] = to_elem<T>(acc);
          }
        }
      }
    }
  });
}

// TopK (1: k attribute; 10: k input; 11: largest, sorted). Results are always
// sorted; equal values keep the lower index first. NaN ranks above every
// number (first for largest, last for smallest), as in numpy's sort.
void topk(KernelContext& ctx) {
  const sdk::Node node = ctx.node();
  const sdk::ConstTensor x = ctx.required_input(0);
  const Shape in = x.shape();
  if (in.empty()) sdk::fail_invalid("TopK: input must have rank >= 1");
  const int64_t axis = normalize_axis(node.attr_int("axis", -1), static_cast<int64_t>(in.size()), "TopK");
  int64_t k;
  if (node.opset() < 10)
    k = node.required_int("k");
  else
    k = scalar_int_input(ctx.required_input(1), "TopK", "K");
  const bool largest = node.opset() < 11 || node.attr_int("largest", 1) != 0;
  const AxisView v(in, axis);
  if (k < 0 || k > v.n)
    sdk::fail_invalid("TopK: k = " + std::to_string(k) + " is out of range for axis " + std::to_string(axis) +
                      " of size " + std::to_string(v.n));
  Shape out_shape = in;
  out_shape[static_cast<size_t>(axis)] = k;
  dispatch<NumericTypes>(x.dtype(), "TopK", [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    const T* px = x.data<T>();
    sdk::Tensor values = ctx.output(0, out_shape, x.dtype());
    sdk::Tensor indices = ctx.output_count() > 1 ? ctx.output(1, out_shape, LOOM_DTYPE_INT64) : sdk::Tensor();
    if (values.size() == 0) return;
    T* pv = values.mutable_data<T>();
    int64_t* pi = indices.exists() ? indices.mutable_data<int64_t>() : nullptr;
    std::vector<int64_t> order(static_cast<size_t>(v.n));
    std::vector<C> row(static_cast<size_t>(v.n));
    for (int64_t o = 0; o < v.outer; ++o) {
      for (int64_t i = 0; i < v.inner; ++i) {
        const int64_t base = o * v.n * v.inner + i;
        for (int64_t j = 0; j < v.n; ++j) row[static_cast<size_t>(j)] = static_cast<C>(px[base + j * v.inner]);
        std::iota(order.begin(), order.end(), 0);
        // Strict weak order: "a ranks before b".
        auto before = [&](int64_t a, int64_t b) {
          const C va = row[static_cast<size_t>(a)], vb = row[static_cast<size_t>(b)];
          const bool na = is_nan_value(va), nb = is_nan_value(vb);
          if (na || nb) {
            if (na && nb) return a < b;
            return largest ? na : nb;
          }
          if (va != vb) return largest ? va > vb : va < vb;
          return a < b;
        };
        std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
        for (int64_t j = 0; j < k; ++j) {
          const int64_t src = order[static_cast<size_t>(j)];
          const int64_t dst = o * k * v.inner + j * v.inner + i;
          pv[dst] = px[base + src * v.inner];
          if (pi) pi[dst] = src;
        }
      }
    }
  });
}

}  // namespace

void register_reduction_softmax_kernels(sdk::KernelRegistry& r) {
  constexpr int kOpen = LOOM_OPSET_OPEN_END;
  r.add_class<Softmax>("", "Softmax", 1, kOpen);
  r.add_class<LogSoftmax>("", "LogSoftmax", 1, kOpen);
  r.add_class<Hardmax>("", "Hardmax", 1, kOpen);
  r.add("", "CumSum", 11, kOpen, cumulative<false>);
  r.add("", "CumProd", 26, kOpen, cumulative<true>);
  r.add("", "TopK", 1, kOpen, topk);
}

}  // namespace loom::reference
