// Tensor family, generators and selections: Range, EyeLike, OneHot, Trilu,
// NonZero, Compress, ReverseSequence, Unique.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "common/dispatch.h"
#include "common/tensor_copy.h"
#include "common/tensor_kernels.h"

namespace loom::reference {
namespace {

using sdk::KernelContext;

constexpr int kOpen = LOOM_OPSET_OPEN_END;

// ---------------------------------------------------------------- Range

using RangeTypes = TypeList<float, double, Float16, BFloat16, int16_t, int32_t, int64_t>;  // 16-bit floats: opset 27

void range(KernelContext& ctx) {
  const sdk::ConstTensor start_t = ctx.required_input(0), limit_t = ctx.required_input(1),
                         delta_t = ctx.required_input(2);
  if (start_t.size() != 1 || limit_t.size() != 1 || delta_t.size() != 1)
    sdk::fail_invalid("Range: start, limit and delta must be scalars");
  if (limit_t.dtype() != start_t.dtype() || delta_t.dtype() != start_t.dtype())
    sdk::fail_invalid("Range: input types differ");
  dispatch<RangeTypes>(start_t.dtype(), "Range", [&](auto tag) {
    using T = decltype(tag);
    const T start = start_t.data<T>()[0], limit = limit_t.data<T>()[0], delta = delta_t.data<T>()[0];
    if (delta == T(0)) sdk::fail_invalid("Range: delta must not be zero");
    int64_t n;
    if constexpr (is_float_v<T>) {
      const double count = std::ceil((static_cast<double>(limit) - static_cast<double>(start)) / static_cast<double>(delta));
      if (!std::isfinite(count) || count > 9.0e15) sdk::fail_invalid("Range: element count is not finite or too large");
      n = static_cast<int64_t>(count);
    } else {
      // limit - start can overflow int64 (a span of more than 2^63
      // elements): checked, as every size from an input.
      int64_t span = 0;
      if (__builtin_sub_overflow(static_cast<int64_t>(limit), static_cast<int64_t>(start), &span))
        sdk::fail_invalid("Range: limit - start overflows int64 (" + std::to_string(static_cast<int64_t>(limit)) +
                          " - " + std::to_string(static_cast<int64_t>(start)) + ")");
      const int64_t d = delta;
      n = span / d + ((span % d != 0) && ((span < 0) == (d < 0)) ? 1 : 0);
    }
    n = std::max<int64_t>(n, 0);
    T* out = ctx.output(0, {n}, sdk::DTypeOf<T>::value).template mutable_data<T>();
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>)  // computed in float, rounded once
        out[i] = T(static_cast<float>(start) + static_cast<float>(i) * static_cast<float>(delta));
      else
        out[i] = static_cast<T>(start + static_cast<T>(i) * delta);
    }
  });
}

// ---------------------------------------------------------------- EyeLike

// Bytes of the value 1 in `dtype` (for identity-like fills).
std::vector<char> one_bytes(int32_t dtype, std::string_view op) {
  std::vector<char> bytes;
  dispatch<PodTypes>(dtype, op, [&](auto tag) {
    using T = decltype(tag);
    const T v = static_cast<T>(1.0f);
    bytes.assign(reinterpret_cast<const char*>(&v), reinterpret_cast<const char*>(&v) + sizeof(T));
  });
  return bytes;
}

void eye_like(KernelContext& ctx) {
  const sdk::ConstTensor x = ctx.required_input(0);
  const Shape in = x.shape();
  if (in.size() != 2) sdk::fail_invalid("EyeLike: input must be 2-D, got " + shape_string(in));
  const int64_t k = ctx.node().attr_int("k", 0);
  // The 'dtype' attribute, else the input's type.
  const int32_t dtype = static_cast<int32_t>(ctx.node().attr_int("dtype", x.dtype()));
  const sdk::Tensor y = ctx.output(0, in, dtype);
  ElementFiller(sdk::ConstTensor(), 0, y, "EyeLike").fill(0, y.size());
  const ElementFiller one(one_bytes(y.dtype(), "EyeLike"), y, "EyeLike");
  for (int64_t i = 0; i < in[0]; ++i) {
    const int64_t j = i + k;
    if (j >= 0 && j < in[1]) one.fill(i * in[1] + j);
  }
}

// ---------------------------------------------------------------- OneHot

void one_hot(KernelContext& ctx) {
  const sdk::ConstTensor indices = ctx.required_input(0), depth_t = ctx.required_input(1),
                         values = ctx.required_input(2);
  if (depth_t.size() != 1) sdk::fail_invalid("OneHot: depth must be a scalar");
  if (values.size() != 2) sdk::fail_invalid("OneHot: values must hold [off_value, on_value]");
  const int64_t depth = depth_t.to_int64_vector()[0];
  if (depth < 1) sdk::fail_invalid("OneHot: depth must be positive, got " + std::to_string(depth));
  const Shape is = indices.shape();
  const int64_t out_rank = static_cast<int64_t>(is.size()) + 1;
  const int64_t axis = normalize_axis(ctx.node().attr_int("axis", -1), out_rank, "OneHot");
  Shape out_shape = is;
  out_shape.insert(out_shape.begin() + axis, depth);
  const std::vector<int64_t> idx = indices.to_int64_vector();
  const sdk::Tensor y = ctx.output(0, out_shape, values.dtype());
  const ElementFiller off(values, 0, y, "OneHot"), on(values, 1, y, "OneHot");
  off.fill(0, y.size());
  const int64_t outer = dims_product(is, 0, axis), inner = dims_product(is, axis, is.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      int64_t v = idx[o * inner + i];
      if (v < 0) v += depth;
      if (v >= 0 && v < depth) on.fill((o * depth + v) * inner + i);
    }
  }
}

// ---------------------------------------------------------------- Trilu

void trilu(KernelContext& ctx) {
  const sdk::ConstTensor x = ctx.required_input(0);
  const Shape in = x.shape();
  if (in.size() < 2) sdk::fail_invalid("Trilu: input rank must be >= 2");
  int64_t k = 0;
  if (const sdk::ConstTensor kt = ctx.input(1); kt.exists()) {
    const auto v = read_indices(kt, "Trilu", "k");
    if (v.size() != 1) sdk::fail_invalid("Trilu: k must be a scalar");
    k = v[0];
  }
  const bool upper = ctx.node().attr_int("upper", 1) != 0;
  const sdk::Tensor y = ctx.output(0, in, x.dtype());
  if (y.size() == 0) return;
  const ElementCopier c(x, y, "Trilu");
  const ElementFiller zero(sdk::ConstTensor(), 0, y, "Trilu");
  const int64_t rows = in[in.size() - 2], cols = in.back();
  const int64_t mats = x.size() / (rows * cols);
  for (int64_t m = 0; m < mats; ++m) {
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < cols; ++j) {
        const int64_t o = (m * rows + i) * cols + j;
        const bool keep = upper ? j - i >= k : j - i <= k;
        if (keep) {
          c.copy(o, o);
        } else {
          zero.fill(o);
        }
      }
    }
  }
}

// ---------------------------------------------------------------- NonZero, Compress

void non_zero(KernelContext& ctx) {
  const sdk::ConstTensor x = ctx.required_input(0);
  const Shape in = x.shape();
  std::vector<int64_t> hits;
  dispatch<PodTypes>(x.dtype(), "NonZero", [&](auto tag) {
    using T = decltype(tag);
    const T* p = x.data<T>();
    for (int64_t i = 0, n = x.size(); i < n; ++i)
      if (static_cast<compute_t<T>>(p[i]) != compute_t<T>(0)) hits.push_back(i);
  });
  const int64_t rank = static_cast<int64_t>(in.size()), nnz = static_cast<int64_t>(hits.size());
  int64_t* out = ctx.output(0, {rank, nnz}, LOOM_DTYPE_INT64).mutable_data<int64_t>();
  const Shape st = strides_of(in);
  for (int64_t j = 0; j < nnz; ++j) {
    int64_t rem = hits[j];
    for (int64_t d = 0; d < rank; ++d) {
      out[d * nnz + j] = rem / st[d];
      rem %= st[d];
    }
  }
}

void compress(KernelContext& ctx) {
  const sdk::ConstTensor x = ctx.required_input(0), cond_t = ctx.required_input(1);
  if (cond_t.rank() != 1) sdk::fail_invalid("Compress: condition must be 1-D");
  const bool* cond = cond_t.data<bool>();
  const int64_t nc = cond_t.size();
  const Shape in = x.shape();
  const auto axis_attr = ctx.node().find_int("axis");
  // View the input as [outer, dim, inner] with the selection on `dim`.
  int64_t outer = 1, dim = x.size(), inner = 1, axis = 0;
  if (axis_attr) {
    axis = normalize_axis(*axis_attr, static_cast<int64_t>(in.size()), "Compress");
    outer = dims_product(in, 0, axis);
    dim = in[axis];
    inner = dims_product(in, axis + 1, in.size());
  }
  std::vector<int64_t> picked;
  for (int64_t i = 0; i < nc; ++i) {
    if (!cond[i]) continue;
    if (i >= dim)
      sdk::fail_invalid("Compress: condition selects index " + std::to_string(i) + " beyond dimension " +
                        std::to_string(dim));
    picked.push_back(i);
  }
  const int64_t np = static_cast<int64_t>(picked.size());
  Shape out_shape{np};
  if (axis_attr) {
    out_shape = in;
    out_shape[axis] = np;
  }
  const sdk::Tensor y = ctx.output(0, out_shape, x.dtype());
  if (y.size() == 0) return;
  const ElementCopier c(x, y, "Compress");
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < np; ++j) c.copy((o * np + j) * inner, (o * dim + picked[j]) * inner, inner);
}

// ---------------------------------------------------------------- ReverseSequence

void reverse_sequence(KernelContext& ctx) {
  const sdk::ConstTensor x = ctx.required_input(0);
  const Shape in = x.shape();
  if (in.size() < 2) sdk::fail_invalid("ReverseSequence: input rank must be >= 2");
  const int64_t batch_axis = ctx.node().attr_int("batch_axis", 1), time_axis = ctx.node().attr_int("time_axis", 0);
  if (!((batch_axis == 0 && time_axis == 1) || (batch_axis == 1 && time_axis == 0)))
    sdk::fail_invalid("ReverseSequence: batch_axis and time_axis must be 0 and 1 in some order");
  const std::vector<int64_t> lens = read_indices(ctx.required_input(1), "ReverseSequence", "sequence_lens");
  const int64_t batch = in[batch_axis], time = in[time_axis];
  if (static_cast<int64_t>(lens.size()) != batch)
    sdk::fail_invalid("ReverseSequence: sequence_lens has " + std::to_string(lens.size()) + " entries for batch " +
                      std::to_string(batch));
  const int64_t inner = dims_product(in, 2, in.size());
  const sdk::Tensor y = ctx.output(0, in, x.dtype());
  if (y.size() == 0) return;
  const ElementCopier c(x, y, "ReverseSequence");
  auto offset = [&](int64_t b, int64_t t) {
    return (time_axis == 0 ? t * batch + b : b * time + t) * inner;
  };
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t len = lens[b];
    if (len < 0 || len > time)
      sdk::fail_invalid("ReverseSequence: sequence length " + std::to_string(len) + " out of range [0, " +
                        std::to_string(time) + "]");
    for (int64_t t = 0; t < time; ++t) c.copy(offset(b, t), offset(b, t < len ? len - 1 - t : t), inner);
  }
}

// ---------------------------------------------------------------- Unique

// Groups the `n` slices compared by `cmp(a, b)` (<0, 0, >0). Returns, for
// each unique slice in output order, its first occurrence, plus for every
// slice the output position of its group and each group's count.
struct UniqueGroups {
  std::vector<int64_t> first, inverse, counts;
};

template <class Cmp>
UniqueGroups group_unique(int64_t n, bool sorted, Cmp cmp) {
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return cmp(a, b) < 0; });
  // Groups in sorted order; stable sort keeps each group's first occurrence first.
  std::vector<int64_t> group_of(n), group_first, group_count;
  for (int64_t i = 0; i < n; ++i) {
    if (i == 0 || cmp(order[i - 1], order[i]) != 0) {
      group_first.push_back(order[i]);
      group_count.push_back(0);
    }
    group_of[order[i]] = static_cast<int64_t>(group_first.size()) - 1;
    ++group_count.back();
  }
  const int64_t g = static_cast<int64_t>(group_first.size());
  std::vector<int64_t> pos(g);  // output position of each sorted group
  std::iota(pos.begin(), pos.end(), 0);
  if (!sorted) {
    std::vector<int64_t> by_first(g);
    std::iota(by_first.begin(), by_first.end(), 0);
    std::sort(by_first.begin(), by_first.end(),
              [&](int64_t a, int64_t b) { return group_first[a] < group_first[b]; });
    for (int64_t p = 0; p < g; ++p) pos[by_first[p]] = p;
  }
  UniqueGroups r;
  r.first.resize(g);
  r.counts.resize(g);
  for (int64_t k = 0; k < g; ++k) {
    r.first[pos[k]] = group_first[k];
    r.counts[pos[k]] = group_count[k];
  }
  r.inverse.resize(n);
  for (int64_t i = 0; i < n; ++i) r.inverse[i] = pos[group_of[i]];
  return r;
}

// Three-way compare of scalars; NaNs sort last and equal each other.
template <class C>
int compare_values(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    const bool na = std::isnan(a), nb = std::isnan(b);
    if (na || nb) return na == nb ? 0 : (na ? 1 : -1);
  }
  return a < b ? -1 : (b < a ? 1 : 0);
}

void unique(KernelContext& ctx) {
  const sdk::ConstTensor x = ctx.required_input(0);
  const Shape in = x.shape();
  const bool sorted = ctx.node().attr_int("sorted", 1) != 0;
  const auto axis_attr = ctx.node().find_int("axis");
  int64_t outer = 1, n = x.size(), inner = 1, axis = 0;
  if (axis_attr) {
    axis = normalize_axis(*axis_attr, static_cast<int64_t>(in.size()), "Unique");
    outer = dims_product(in, 0, axis);
    n = in[axis];
    inner = dims_product(in, axis + 1, in.size());
  }
  // Slices compare lexicographically over (outer, inner) in row-major order.
  auto slice_cmp = [&](auto elem_cmp) {
    return [=](int64_t a, int64_t b) {
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          const int c = elem_cmp((o * n + a) * inner + i, (o * n + b) * inner + i);
          if (c != 0) return c;
        }
      return 0;
    };
  };
  UniqueGroups g;
  if (x.dtype() == LOOM_DTYPE_STRING) {
    g = group_unique(n, sorted, slice_cmp([&](int64_t a, int64_t b) {
                       return x.string_at(a).compare(x.string_at(b));
                     }));
  } else {
    dispatch<PodTypes>(x.dtype(), "Unique", [&](auto tag) {
      using T = decltype(tag);
      const T* p = x.data<T>();
      g = group_unique(n, sorted, slice_cmp([p](int64_t a, int64_t b) {
                         return compare_values(static_cast<compute_t<T>>(p[a]), static_cast<compute_t<T>>(p[b]));
                       }));
    });
  }
  const int64_t nu = static_cast<int64_t>(g.first.size());
  Shape y_shape{nu};
  if (axis_attr) {
    y_shape = in;
    y_shape[axis] = nu;
  }
  const sdk::Tensor y = ctx.output(0, y_shape, x.dtype());
  if (y.size() > 0) {
    const ElementCopier c(x, y, "Unique");
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t u = 0; u < nu; ++u) c.copy((o * nu + u) * inner, (o * n + g.first[u]) * inner, inner);
  }
  auto write = [&](size_t i, const std::vector<int64_t>& v) {
    if (ctx.output_count() <= i || ctx.node().output_name(i).empty()) return;
    const sdk::Tensor t = ctx.output(i, {static_cast<int64_t>(v.size())}, LOOM_DTYPE_INT64);
    if (!v.empty()) std::copy(v.begin(), v.end(), t.mutable_data<int64_t>());
  };
  write(1, g.first);
  write(2, g.inverse);
  write(3, g.counts);
}

}  // namespace

void register_tensor_misc_kernels(sdk::KernelRegistry& r) {
  r.add("", "Range", 11, kOpen, range);
  r.add("", "EyeLike", 9, kOpen, eye_like);
  r.add("", "OneHot", 9, kOpen, one_hot);
  r.add("", "Trilu", 14, kOpen, trilu);
  r.add("", "NonZero", 9, kOpen, non_zero);
  r.add("", "Compress", 9, kOpen, compress);
  r.add("", "ReverseSequence", 10, kOpen, reverse_sequence);
  r.add("", "Unique", 11, kOpen, unique);
}

}  // namespace loom::reference
