// ai.onnx.ml kernels (the classical-ML domain): Binarizer,
// ArrayFeatureExtractor and LabelEncoder (1, 2 and 4) here, TreeEnsemble-5
// in ml_tree_ensemble.cpp, TreeEnsembleClassifier / Regressor (1, 3) in
// ml_tree_classic.cpp (on the walk of ml_tree_core.h), LinearClassifier /
// Regressor in ml_linear.cpp, SVMClassifier / Regressor in ml_svm.cpp,
// Scaler / Normalizer / Imputer in ml_transform.cpp and OneHotEncoder /
// FeatureVectorizer / CategoryMapper in ml_encode.cpp. ZipMap,
// DictVectorizer and CastMap take or give maps, which Loom does not have.
#include <map>
#include <unordered_map>

#include "common/dispatch.h"
#include "common/reduction_common.h"
#include "kernel_families.h"
#include "kernels/ml_common.h"
#include "kernels/ml_internal.h"

namespace loom::reference {
namespace {

using sdk::KernelContext;

// Binarizer: 1 where x > threshold, else 0, in x's type.
void binarizer(KernelContext& ctx) {
  const sdk::ConstTensor x = ctx.required_input(0);
  const double threshold = ctx.node().attr_float("threshold", 0.0f);
  dispatch<TypeList<float, double, int32_t, int64_t>>(x.dtype(), "Binarizer", [&](auto tag) {
    using T = decltype(tag);
    sdk::Tensor y = ctx.output(0, x.shape(), x.dtype());
    if (y.size() == 0) return;
    const T* px = x.data<T>();
    T* py = y.mutable_data<T>();
    for (int64_t i = 0; i < x.size(); ++i) py[i] = static_cast<double>(px[i]) > threshold ? T(1) : T(0);
  });
}

// ArrayFeatureExtractor: the elements of x's last dim at the given indices
// (x [.., D] -> [.., K]; a 1-D x gives [1, K]).
void array_feature_extractor(KernelContext& ctx) {
  const std::string op = "ArrayFeatureExtractor";
  const sdk::ConstTensor x = ctx.required_input(0);
  const std::vector<int64_t> idx = ctx.required_input(1).to_int64_vector();
  Shape xs = x.shape();
  if (xs.empty()) sdk::fail_invalid(op + ": X must have rank >= 1");
  const int64_t d = xs.back();
  for (int64_t i : idx)
    if (i < 0 || i >= d)
      sdk::fail_invalid(op + ": index " + std::to_string(i) + " out of range for last dim " + std::to_string(d));
  if (idx.empty()) sdk::fail_invalid(op + ": Y must hold at least one index");
  Shape ys = xs;
  ys.back() = static_cast<int64_t>(idx.size());
  if (xs.size() == 1) ys = {1, static_cast<int64_t>(idx.size())};
  const int64_t rows = d == 0 ? 0 : x.size() / d;
  sdk::checked_element_count(ys, op + ": output size");
  sdk::Tensor y = ctx.output(0, ys, x.dtype());
  if (x.dtype() == LOOM_DTYPE_STRING) {
    for (int64_t r = 0; r < rows; ++r)
      for (size_t k = 0; k < idx.size(); ++k)
        y.set_string(r * static_cast<int64_t>(idx.size()) + static_cast<int64_t>(k), x.string_at(r * d + idx[k]));
    return;
  }
  dispatch<TypeList<float, double, int32_t, int64_t>>(x.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    if (y.size() == 0) return;
    const T* px = x.data<T>();
    T* py = y.mutable_data<T>();
    for (int64_t r = 0; r < rows; ++r)
      for (size_t k = 0; k < idx.size(); ++k) py[r * static_cast<int64_t>(idx.size()) + static_cast<int64_t>(k)] = px[r * d + idx[k]];
  });
}

// A list of keys or values of one element type: strings, or numbers kept
// both as int64 (exact integers) and double.
struct Column {
  int32_t dtype = LOOM_DTYPE_UNDEFINED;
  std::vector<std::string> strings;
  std::vector<int64_t> ints;
  std::vector<double> reals;
  size_t size() const { return dtype == LOOM_DTYPE_STRING ? strings.size() : ints.size(); }
  void add_number(double v, int64_t i) {
    reals.push_back(v);
    ints.push_back(i);
  }
};

Column column_from_tensor(const sdk::ConstTensor& t, const std::string& op) {
  Column c;
  c.dtype = t.dtype();
  if (c.dtype == LOOM_DTYPE_STRING) {
    for (int64_t i = 0; i < t.size(); ++i) c.strings.emplace_back(t.string_at(i));
  } else if (c.dtype == LOOM_DTYPE_FLOAT || c.dtype == LOOM_DTYPE_DOUBLE) {
    for (double v : float_tensor_to_doubles(t, op)) c.add_number(v, static_cast<int64_t>(v));
  } else {
    for (int64_t v : t.to_int64_vector()) c.add_number(static_cast<double>(v), v);
  }
  return c;
}

// The keys or values of a LabelEncoder: `<prefix>_tensor` (opset 4), else
// `<prefix>_strings` / `_int64s` / `_floats`.
Column label_column(const sdk::Node& node, const std::string& prefix, const std::string& op) {
  if (const sdk::ConstTensor t = node.attr_tensor(prefix + "_tensor"); t.exists()) return column_from_tensor(t, op);
  Column c;
  if (auto s = node.find_strings(prefix + "_strings")) {
    c.dtype = LOOM_DTYPE_STRING;
    c.strings = *s;
  } else if (auto i = node.find_ints(prefix + "_int64s")) {
    c.dtype = LOOM_DTYPE_INT64;
    for (int64_t v : *i) c.add_number(static_cast<double>(v), v);
  } else if (auto f = node.find_floats(prefix + "_floats")) {
    c.dtype = LOOM_DTYPE_FLOAT;
    for (float v : *f) c.add_number(v, static_cast<int64_t>(v));
  }
  return c;
}

// LabelEncoder: maps each element of X through keys -> values, unknown keys
// to the default. Opset 1: classes_strings maps string <-> its index.
class LabelEncoder {
 public:
  explicit LabelEncoder(const sdk::Node& node) {
    const std::string op = "LabelEncoder";
    if (node.opset() < 2) {
      keys_.dtype = LOOM_DTYPE_STRING;
      keys_.strings = node.attr_strings("classes_strings");
      values_.dtype = LOOM_DTYPE_INT64;
      for (size_t i = 0; i < keys_.strings.size(); ++i) values_.add_number(static_cast<double>(i), static_cast<int64_t>(i));
      default_string_ = node.attr_string("default_string", "_Unused");
      default_int_ = node.attr_int("default_int64", -1);
      legacy_ = true;
    } else {
      keys_ = label_column(node, "keys", op);
      values_ = label_column(node, "values", op);
      if (keys_.dtype == LOOM_DTYPE_UNDEFINED || values_.dtype == LOOM_DTYPE_UNDEFINED)
        sdk::fail_invalid(op + ": keys and values are required");
      if (keys_.size() != values_.size())
        sdk::fail_invalid(op + ": " + std::to_string(keys_.size()) + " keys for " + std::to_string(values_.size()) + " values");
      default_string_ = node.attr_string("default_string", "_Unused");
      default_int_ = node.attr_int("default_int64", -1);
      default_real_ = node.attr_float("default_float", -0.0f);
      if (const sdk::ConstTensor d = node.attr_tensor("default_tensor"); d.exists()) {
        const Column c = column_from_tensor(d, op);
        if (c.size() != 1 || c.dtype != values_.dtype)
          sdk::fail_invalid(op + ": default_tensor must hold one value of the values' type");
        if (c.dtype == LOOM_DTYPE_STRING) default_string_ = c.strings[0];
        else default_int_ = c.ints[0], default_real_ = c.reals[0];
      }
    }
    for (size_t i = 0; i < keys_.size(); ++i) {
      if (keys_.dtype == LOOM_DTYPE_STRING) string_index_.emplace(keys_.strings[i], i);
      else number_index_.emplace(keys_.reals[i], i);
    }
  }

  void compute(KernelContext& ctx) const {
    const std::string op = "LabelEncoder";
    const sdk::ConstTensor x = ctx.required_input(0);
    // Opset 1 maps both ways: strings to indices, indices to strings.
    const bool reverse = legacy_ && x.dtype() == LOOM_DTYPE_INT64;
    const bool string_keys = reverse ? false : keys_.dtype == LOOM_DTYPE_STRING;
    if ((x.dtype() == LOOM_DTYPE_STRING) != string_keys)
      sdk::fail_invalid(op + ": input type " + sdk::dtype_name(x.dtype()) + " does not match the keys' type");
    const int32_t out_type = reverse ? LOOM_DTYPE_STRING : values_.dtype;
    sdk::Tensor y = ctx.output(0, x.shape(), out_type);
    for (int64_t i = 0; i < x.size(); ++i) {
      size_t found = SIZE_MAX;
      if (reverse) {
        const int64_t k = x.data<int64_t>()[i];
        if (k >= 0 && static_cast<size_t>(k) < keys_.strings.size()) found = static_cast<size_t>(k);
        y.set_string(i, found == SIZE_MAX ? default_string_ : keys_.strings[found]);
        continue;
      }
      if (string_keys) {
        auto it = string_index_.find(std::string(x.string_at(i)));
        if (it != string_index_.end()) found = it->second;
      } else {
        auto it = number_index_.find(number_at(x, i, op));
        if (it != number_index_.end()) found = it->second;
      }
      write(y, i, found);
    }
  }

 private:
  static double number_at(const sdk::ConstTensor& x, int64_t i, const std::string& op) {
    double v = 0;
    dispatch<TypeList<float, double, int16_t, int32_t, int64_t>>(x.dtype(), op, [&](auto tag) {
      using T = decltype(tag);
      v = static_cast<double>(x.data<T>()[i]);
    });
    return v;
  }
  void write(sdk::Tensor& y, int64_t i, size_t found) const {
    if (values_.dtype == LOOM_DTYPE_STRING) {
      y.set_string(i, found == SIZE_MAX ? default_string_ : values_.strings[found]);
      return;
    }
    dispatch<TypeList<float, double, int16_t, int32_t, int64_t>>(values_.dtype, "LabelEncoder", [&](auto tag) {
      using T = decltype(tag);
      T* p = y.mutable_data<T>();
      if constexpr (std::is_floating_point_v<T>)
        p[i] = static_cast<T>(found == SIZE_MAX ? default_real_ : values_.reals[found]);
      else
        p[i] = static_cast<T>(found == SIZE_MAX ? default_int_ : values_.ints[found]);
    });
  }

  Column keys_, values_;
  std::string default_string_;
  int64_t default_int_ = -1;
  double default_real_ = -0.0;
  bool legacy_ = false;
  std::unordered_map<std::string, size_t> string_index_;
  std::map<double, size_t> number_index_;
};

}  // namespace

void register_ml_kernels(sdk::KernelRegistry& r) {
  constexpr int kOpen = LOOM_OPSET_OPEN_END;
  r.add("ai.onnx.ml", "Binarizer", 1, kOpen, binarizer);
  r.add("ai.onnx.ml", "ArrayFeatureExtractor", 1, kOpen, array_feature_extractor);
  r.add_class<LabelEncoder>("ai.onnx.ml", "LabelEncoder", 1, kOpen);
  register_ml_tree_ensemble_kernels(r);
  register_ml_tree_classic_kernels(r);
  register_ml_linear_kernels(r);
  register_ml_svm_kernels(r);
  register_ml_transform_kernels(r);
  register_ml_encode_kernels(r);
  register_ml_map_kernels(r);
}

}  // namespace loom::reference
