// Shared pieces of the classical-ML kernels of ai.onnx.ml (ml_tree_classic,
// ml_linear, ml_svm, ml_transform, ml_encode): their registration
// functions, called from register_ml_kernels in ml.cpp, and the helpers
// they share: reading X as rows of double features, class labels, and the
// post transforms (NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO, PROBIT) with the
// formulas of ONNX's reference and ONNX Runtime (probit through the same
// erf-inverse approximation, so scores match theirs).
//
// Loom has no map values, so ZipMap, DictVectorizer and CastMap (whose
// inputs or outputs are maps or sequences of maps) are not implemented.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "common/dispatch.h"
#include "common/shape.h"
#include "loom/sdk.h"

namespace loom::reference {

void register_ml_tree_classic_kernels(sdk::KernelRegistry& r);  // TreeEnsembleClassifier / Regressor 1, 3
void register_ml_linear_kernels(sdk::KernelRegistry& r);     // LinearClassifier, LinearRegressor
void register_ml_svm_kernels(sdk::KernelRegistry& r);        // SVMClassifier, SVMRegressor
void register_ml_transform_kernels(sdk::KernelRegistry& r);  // Scaler, Normalizer, Imputer
void register_ml_encode_kernels(sdk::KernelRegistry& r);     // OneHotEncoder, FeatureVectorizer, CategoryMapper
void register_ml_map_kernels(sdk::KernelRegistry& r);        // ZipMap, CastMap, DictVectorizer (map values)

namespace ml {

// X as `rows` rows of `cols` features: a 1-D X is one row, a 2-D X is
// [rows, cols]; any other rank is refused. Element types float, double,
// int64, int32.
struct Features {
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<double> values;
  const double* row(int64_t r) const { return values.data() + r * cols; }
};

inline Features read_features(const sdk::ConstTensor& x, const std::string& op) {
  Features f;
  const Shape s = x.shape();
  if (s.size() == 1) {
    f.rows = 1;
    f.cols = s[0];
  } else if (s.size() == 2) {
    f.rows = s[0];
    f.cols = s[1];
  } else {
    sdk::fail_invalid(op + ": X must be 1-D or 2-D, got rank " + std::to_string(s.size()));
  }
  f.values.resize(static_cast<size_t>(x.size()));
  if (f.values.empty()) return f;
  dispatch<TypeList<float, double, int64_t, int32_t>>(x.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    const T* p = x.data<T>();
    for (size_t i = 0; i < f.values.size(); ++i) f.values[i] = static_cast<double>(p[i]);
  });
  return f;
}

// Writes `values` (row-major, dims `dims`) to output `index` as float.
inline void write_floats(sdk::KernelContext& ctx, size_t index, const Shape& dims, const std::vector<double>& values) {
  sdk::Tensor y = ctx.output(index, dims, LOOM_DTYPE_FLOAT);
  if (y.size() == 0) return;
  float* p = y.mutable_data<float>();
  for (size_t i = 0; i < values.size(); ++i) p[i] = static_cast<float>(values[i]);
}

// classlabels_<ints_name> or classlabels_strings (at most one of them).
struct ClassLabels {
  bool strings = false;
  std::vector<int64_t> ints;
  std::vector<std::string> names;
  size_t size() const { return strings ? names.size() : ints.size(); }
  bool empty() const { return size() == 0; }

  static ClassLabels read(const sdk::Node& node, const std::string& ints_name, const std::string& op) {
    ClassLabels c;
    auto i = node.find_ints(ints_name);
    auto s = node.find_strings("classlabels_strings");
    if (i && !i->empty() && s && !s->empty())
      sdk::fail_invalid(op + ": " + ints_name + " and classlabels_strings are both set; one only");
    if (s && !s->empty()) {
      c.strings = true;
      c.names = *s;
    } else if (i) {
      c.ints = *i;
    }
    return c;
  }
  // Output `index` ([rows]) holding, per row, the label at `picked[r]`
  // (an index into the labels), or the raw int64 in `raw[r]` where picked is
  // -1 (labels decided without a class index).
  void write(sdk::KernelContext& ctx, size_t index, const std::vector<int64_t>& picked,
             const std::vector<int64_t>& raw, const std::string& fallback_string = "") const {
    const int64_t n = static_cast<int64_t>(picked.size());
    sdk::Tensor y = ctx.output(index, {n}, strings ? LOOM_DTYPE_STRING : LOOM_DTYPE_INT64);
    for (int64_t r = 0; r < n; ++r) {
      const int64_t k = picked[static_cast<size_t>(r)];
      if (strings) {
        y.set_string(r, k >= 0 && static_cast<size_t>(k) < names.size() ? names[static_cast<size_t>(k)] : fallback_string);
      } else {
        y.mutable_data<int64_t>()[r] = k < 0 ? raw[static_cast<size_t>(r)]
                                     : (static_cast<size_t>(k) < ints.size() ? ints[static_cast<size_t>(k)] : k);
      }
    }
  }
};

enum class PostTransform { kNone, kSoftmax, kLogistic, kSoftmaxZero, kProbit };

inline PostTransform read_post_transform(const sdk::Node& node, const std::string& op) {
  const std::string s = node.attr_string("post_transform", "NONE");
  if (s == "NONE") return PostTransform::kNone;
  if (s == "SOFTMAX") return PostTransform::kSoftmax;
  if (s == "LOGISTIC") return PostTransform::kLogistic;
  if (s == "SOFTMAX_ZERO") return PostTransform::kSoftmaxZero;
  if (s == "PROBIT") return PostTransform::kProbit;
  sdk::fail_invalid(op + ": post_transform '" + s + "' is not one of NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO, PROBIT");
}

inline double logistic(double v) {
  const double e = 1.0 / (1.0 + std::exp(-std::fabs(v)));
  return v < 0 ? 1.0 - e : e;
}

// The erf inverse approximation (Winitzki, a = 0.147) ONNX's reference and
// ONNX Runtime use for PROBIT.
inline double erf_inv(double x) {
  const double sgn = x < 0 ? -1.0 : 1.0;
  x = (1.0 - x) * (1.0 + x);
  if (x == 0) return 0;
  const double lg = std::log(x);
  const double v = 2.0 / (3.14159265358979323846 * 0.147) + 0.5 * lg;
  const double v2 = 1.0 / 0.147 * lg;
  return sgn * std::sqrt(-v + std::sqrt(v * v - v2));
}

inline double probit(double v) { return 1.41421356 * erf_inv(v * 2.0 - 1.0); }

inline void softmax(double* v, int64_t n) {
  if (n <= 0) return;
  const double m = *std::max_element(v, v + n);
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += (v[i] = std::exp(v[i] - m));
  for (int64_t i = 0; i < n; ++i) v[i] /= sum;
}

// Softmax that leaves (near-)zero scores at zero weight; all zero gives 0.5
// each (ONNX's reference).
inline void softmax_zero(double* v, int64_t n) {
  if (n <= 0) return;
  const double m = *std::max_element(v, v + n);
  const double exp_neg_max = std::exp(-m);
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (v[i] > 0.0000001 || v[i] < -0.0000001) v[i] = std::exp(v[i] - m);
    else v[i] *= exp_neg_max;
    sum += v[i];
  }
  for (int64_t i = 0; i < n; ++i) v[i] = sum == 0 ? 0.5 : v[i] / sum;
}

// Applies `t` to one row of `n` scores in place.
inline void apply_post_transform(PostTransform t, double* v, int64_t n) {
  switch (t) {
    case PostTransform::kNone: break;
    case PostTransform::kSoftmax: softmax(v, n); break;
    case PostTransform::kSoftmaxZero: softmax_zero(v, n); break;
    case PostTransform::kLogistic:
      for (int64_t i = 0; i < n; ++i) v[i] = logistic(v[i]);
      break;
    case PostTransform::kProbit:
      for (int64_t i = 0; i < n; ++i) v[i] = probit(v[i]);
      break;
  }
}

// The index of the first largest of `n` values.
inline int64_t argmax(const double* v, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; ++i)
    if (v[i] > v[best]) best = i;
  return best;
}

// A float list attribute `name`, or its double `<name>_as_tensor` (opset 3
// tree ensembles); both set is refused. `present` tells whether either was.
inline std::vector<double> floats_or_tensor(const sdk::Node& node, const std::string& name, const std::string& op,
                                            bool* present = nullptr) {
  auto f = node.find_floats(name);
  const sdk::ConstTensor t = node.attr_tensor(name + "_as_tensor");
  if (f && t.exists()) sdk::fail_invalid(op + ": " + name + " and " + name + "_as_tensor are both set; one only");
  if (present != nullptr) *present = f.has_value() || t.exists();
  std::vector<double> out;
  if (t.exists()) {
    if (t.dtype() != LOOM_DTYPE_DOUBLE && t.dtype() != LOOM_DTYPE_FLOAT)
      sdk::fail_invalid(op + ": " + name + "_as_tensor must be a double tensor, got " + sdk::dtype_name(t.dtype()));
    out.resize(static_cast<size_t>(t.size()));
    if (t.dtype() == LOOM_DTYPE_DOUBLE) {
      const double* p = t.data<double>();
      std::copy(p, p + t.size(), out.begin());
    } else {
      const float* p = t.data<float>();
      std::copy(p, p + t.size(), out.begin());
    }
  } else if (f) {
    out.assign(f->begin(), f->end());
  }
  return out;
}

// Checks that list attribute `name` of `op` has `expected` entries.
inline void expect_length(const std::string& op, const std::string& name, size_t actual, size_t expected,
                          const std::string& against) {
  if (actual != expected)
    sdk::fail_invalid(op + ": " + name + " has " + std::to_string(actual) + " entries, expected " +
                      std::to_string(expected) + " (" + against + ")");
}

}  // namespace ml
}  // namespace loom::reference
