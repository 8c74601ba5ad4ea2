// Det (11) and Einsum (12).
#include <algorithm>
#include <cmath>
#include <string>

#include "common/reduction_common.h"

namespace loom::reference {
namespace {

using sdk::KernelContext;

// Det: determinant of each trailing [M, M] matrix, by LU decomposition with
// partial pivoting in double.
void det(KernelContext& ctx) {
  const sdk::ConstTensor x = ctx.required_input(0);
  const Shape in = x.shape();
  if (in.size() < 2 || in[in.size() - 1] != in[in.size() - 2])
    sdk::fail_invalid("Det: input must have shape [*, M, M], got " + shape_string(in));
  const int64_t M = in.back();
  const Shape out_shape(in.begin(), in.end() - 2);
  const int64_t batch = element_count(out_shape);
  const std::vector<double> v = float_tensor_to_doubles(x, "Det");
  std::vector<double> result(static_cast<size_t>(batch));
  std::vector<double> a(static_cast<size_t>(M * M));
  for (int64_t b = 0; b < batch; ++b) {
    std::copy(v.begin() + b * M * M, v.begin() + (b + 1) * M * M, a.begin());
    auto at = [&](int64_t r, int64_t c) -> double& { return a[static_cast<size_t>(r * M + c)]; };
    double d = 1.0;
    for (int64_t k = 0; k < M && d != 0.0; ++k) {
      int64_t piv = k;
      for (int64_t r = k + 1; r < M; ++r)
        if (std::fabs(at(r, k)) > std::fabs(at(piv, k))) piv = r;
      if (at(piv, k) == 0.0) {
        d = 0.0;
        break;
      }
      if (piv != k) {
        for (int64_t c = 0; c < M; ++c) std::swap(at(k, c), at(piv, c));
        d = -d;
      }
      d *= at(k, k);
      for (int64_t r = k + 1; r < M; ++r) {
        const double f = at(r, k) / at(k, k);
        for (int64_t c = k; c < M; ++c) at(r, c) -= f * at(k, c);
      }
    }
    result[static_cast<size_t>(b)] = d;
  }
  write_float_output(ctx, 0, out_shape, x.dtype(), result, "Det");
}

// Einsum. Labels are the letters (ids 0..51) plus one id per ellipsis dim
// (52.., right-aligned and broadcast numpy-style across operands). The
// output is computed by summing, for each output element, the product of the
// operands over every combination of the summed labels; repeated labels in
// one operand (diagonals) add their strides.
class Einsum {
 public:
  explicit Einsum(const sdk::Node& node) {
    for (char ch : node.attr_string("equation", ""))
      if (ch != ' ') eq_ += ch;
    const size_t arrow = eq_.find("->");
    explicit_ = arrow != std::string::npos;
    const std::string lhs = eq_.substr(0, arrow);
    if (explicit_) rhs_ = parse_term(eq_.substr(arrow + 2));
    size_t start = 0;
    while (true) {
      const size_t comma = lhs.find(',', start);
      terms_.push_back(parse_term(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }

  void compute(KernelContext& ctx) const {
    const size_t n_in = ctx.input_count();
    if (n_in != terms_.size())
      fail("the equation has " + std::to_string(terms_.size()) + " operand terms but the node has " +
           std::to_string(n_in) + " inputs");
    std::vector<sdk::ConstTensor> xs;
    std::vector<Shape> shapes;
    for (size_t k = 0; k < n_in; ++k) {
      xs.push_back(ctx.required_input(k));
      shapes.push_back(xs.back().shape());
      if (xs[k].dtype() != xs[0].dtype()) fail("operands have different element types");
    }
    // Ellipsis width per operand and overall.
    std::vector<int64_t> ell(n_in, 0);
    int64_t E = 0;
    for (size_t k = 0; k < n_in; ++k) {
      const int64_t letters = static_cast<int64_t>(std::count_if(terms_[k].begin(), terms_[k].end(), [](int l) { return l >= 0; }));
      const bool has_ell = letters != static_cast<int64_t>(terms_[k].size());
      const int64_t rank = static_cast<int64_t>(shapes[k].size());
      if (has_ell ? rank < letters : rank != letters)
        fail("operand " + std::to_string(k) + " of shape " + shape_string(shapes[k]) + " does not match term " +
             std::to_string(k));
      ell[k] = rank - letters;
      E = std::max(E, ell[k]);
    }
    const int n_labels = kEllipsisBase + static_cast<int>(E);
    std::vector<int64_t> size(static_cast<size_t>(n_labels), -1);
    std::vector<int> uses(static_cast<size_t>(n_labels), 0);
    // Label of each dim of each operand.
    std::vector<std::vector<int>> dim_labels(n_in);
    for (size_t k = 0; k < n_in; ++k) {
      for (int l : terms_[k]) {
        if (l >= 0) {
          dim_labels[k].push_back(l);
        } else {
          for (int64_t e = 0; e < ell[k]; ++e) dim_labels[k].push_back(kEllipsisBase + static_cast<int>(E - ell[k] + e));
        }
      }
      for (size_t d = 0; d < dim_labels[k].size(); ++d) {
        const int l = dim_labels[k][d];
        const int64_t s = shapes[k][d];
        int64_t& cur = size[static_cast<size_t>(l)];
        if (cur == -1 || cur == 1)
          cur = s;
        else if (s != cur && s != 1)
          fail("label '" + label_name(l) + "' has sizes " + std::to_string(cur) + " and " + std::to_string(s));
        ++uses[static_cast<size_t>(l)];
      }
    }
    // Output labels.
    std::vector<int> out_labels;
    if (explicit_) {
      std::vector<bool> seen(static_cast<size_t>(n_labels), false);
      for (int l : rhs_) {
        if (l < 0) {
          for (int64_t e = 0; e < E; ++e) out_labels.push_back(kEllipsisBase + static_cast<int>(e));
          continue;
        }
        if (size[static_cast<size_t>(l)] == -1) fail("output label '" + label_name(l) + "' is not in any operand");
        if (seen[static_cast<size_t>(l)]) fail("output label '" + label_name(l) + "' is repeated");
        seen[static_cast<size_t>(l)] = true;
        out_labels.push_back(l);
      }
    } else {
      for (int64_t e = 0; e < E; ++e) out_labels.push_back(kEllipsisBase + static_cast<int>(e));
      // Letters used exactly once, in ASCII order (A-Z before a-z).
      for (int l = 0; l < kEllipsisBase; ++l)
        if (uses[static_cast<size_t>(l)] == 1) out_labels.push_back(l);
    }
    std::vector<bool> is_out(static_cast<size_t>(n_labels), false);
    for (int l : out_labels) is_out[static_cast<size_t>(l)] = true;
    std::vector<int> sum_labels;
    for (int l = 0; l < n_labels; ++l)
      if (size[static_cast<size_t>(l)] != -1 && !is_out[static_cast<size_t>(l)]) sum_labels.push_back(l);

    // Per-operand stride of each label (0 where absent or broadcast).
    std::vector<std::vector<int64_t>> label_stride(n_in, std::vector<int64_t>(static_cast<size_t>(n_labels), 0));
    for (size_t k = 0; k < n_in; ++k) {
      const Shape st = strides_of(shapes[k]);
      for (size_t d = 0; d < dim_labels[k].size(); ++d)
        if (shapes[k][d] != 1) label_stride[k][static_cast<size_t>(dim_labels[k][d])] += st[d];
    }
    Shape out_shape;
    for (int l : out_labels) out_shape.push_back(size[static_cast<size_t>(l)]);

    const int32_t dtype = xs[0].dtype();
    if (dtype == LOOM_DTYPE_FLOAT || dtype == LOOM_DTYPE_DOUBLE || dtype == LOOM_DTYPE_FLOAT16 ||
        dtype == LOOM_DTYPE_BFLOAT16) {
      std::vector<std::vector<double>> vals;
      for (const auto& x : xs) vals.push_back(float_tensor_to_doubles(x, "Einsum"));
      const std::vector<double> out = contract(vals, label_stride, out_labels, sum_labels, size);
      write_float_output(ctx, 0, out_shape, dtype, out, "Einsum");
      return;
    }
    // Integers: modular arithmetic in uint64 gives the right low bits for
    // every integer type.
    using Types = TypeList<int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>;
    dispatch<Types>(dtype, "Einsum", [&](auto tag) {
      using T = decltype(tag);
      std::vector<std::vector<uint64_t>> vals;
      for (const auto& x : xs) {
        const T* p = x.data<T>();
        vals.emplace_back(static_cast<size_t>(x.size()));
        for (size_t i = 0; i < vals.back().size(); ++i) vals.back()[i] = static_cast<uint64_t>(p[i]);
      }
      const std::vector<uint64_t> out = contract(vals, label_stride, out_labels, sum_labels, size);
      sdk::Tensor t = ctx.output(0, out_shape, dtype);
      if (t.size() == 0) return;
      T* py = t.mutable_data<T>();
      for (size_t i = 0; i < out.size(); ++i) py[i] = static_cast<T>(out[i]);
    });
  }

 private:
  static constexpr int kEllipsisBase = 52;

  template <class A>
  static std::vector<A> contract(const std::vector<std::vector<A>>& vals,
                                 const std::vector<std::vector<int64_t>>& label_stride,
                                 const std::vector<int>& out_labels, const std::vector<int>& sum_labels,
                                 const std::vector<int64_t>& size) {
    const size_t n_in = vals.size();
    int64_t n_out = 1, n_sum = 1;
    for (int l : out_labels) n_out *= size[static_cast<size_t>(l)];
    for (int l : sum_labels) n_sum *= size[static_cast<size_t>(l)];
    std::vector<A> out(static_cast<size_t>(n_out), A(0));
    if (n_out == 0 || n_sum == 0) return out;
    // Odometers over the output labels and the summed labels, each moving
    // every operand's offset incrementally.
    auto advance = [&](const std::vector<int>& labels, std::vector<int64_t>& idx, std::vector<int64_t>& off) {
      for (size_t j = labels.size(); j-- > 0;) {
        const size_t l = static_cast<size_t>(labels[j]);
        ++idx[j];
        for (size_t k = 0; k < n_in; ++k) off[k] += label_stride[k][l];
        if (idx[j] < size[l]) return;
        for (size_t k = 0; k < n_in; ++k) off[k] -= label_stride[k][l] * size[l];
        idx[j] = 0;
      }
    };
    std::vector<int64_t> out_idx(out_labels.size(), 0), base(n_in, 0);
    std::vector<int64_t> sum_idx(sum_labels.size(), 0), off(n_in, 0);
    for (int64_t o = 0; o < n_out; ++o) {
      A acc = 0;
      off = base;
      std::fill(sum_idx.begin(), sum_idx.end(), 0);
      for (int64_t s = 0; s < n_sum; ++s) {
        A prod = 1;
        for (size_t k = 0; k < n_in; ++k) prod *= vals[k][static_cast<size_t>(off[k])];
        acc += prod;
        advance(sum_labels, sum_idx, off);
      }
      out[static_cast<size_t>(o)] = acc;
      advance(out_labels, out_idx, base);
    }
    return out;
  }

  // Letters map to 0..51 (A-Z, a-z); "..." to -1.
  std::vector<int> parse_term(const std::string& term) const {
    std::vector<int> out;
    bool had_ellipsis = false;
    for (size_t i = 0; i < term.size(); ++i) {
      const char c = term[i];
      if (c >= 'A' && c <= 'Z') {
        out.push_back(c - 'A');
      } else if (c >= 'a' && c <= 'z') {
        out.push_back(26 + (c - 'a'));
      } else if (c == '.' && term.compare(i, 3, "...") == 0 && !had_ellipsis) {
        out.push_back(-1);
        had_ellipsis = true;
        i += 2;
      } else {
        fail("invalid term '" + term + "'");
      }
    }
    return out;
  }
  static std::string label_name(int l) {
    if (l < 26) return std::string(1, static_cast<char>('A' + l));
    if (l < kEllipsisBase) return std::string(1, static_cast<char>('a' + l - 26));
    return "...";
  }
  [[noreturn]] void fail(const std::string& msg) const {
    sdk::fail_invalid("Einsum: equation '" + eq_ + "': " + msg);
  }

  std::string eq_;
  bool explicit_ = false;
  std::vector<std::vector<int>> terms_;
  std::vector<int> rhs_;
};

}  // namespace

void register_reduction_linalg_kernels(sdk::KernelRegistry& r) {
  constexpr int kOpen = LOOM_OPSET_OPEN_END;
  r.add("", "Det", 11, kOpen, det);
  r.add_class<Einsum>("", "Einsum", 12, kOpen);
}

}  // namespace loom::reference
