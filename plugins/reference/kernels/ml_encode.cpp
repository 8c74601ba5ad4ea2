// ai.onnx.ml encoders (opset 1): OneHotEncoder (each element of X becomes a
// row of 0 / 1 over the categories: Y is X's shape plus [categories]),
// FeatureVectorizer (inputs concatenated along the features, each cut or
// zero-padded to its inputdimensions entry; a 1-D input is one row, as in
// ONNX Runtime) and CategoryMapper (strings <-> int64 through two parallel
// lists).
#include <cmath>
#include <map>
#include <unordered_map>

#include "kernels/ml_common.h"

namespace loom::reference {
namespace {

using sdk::KernelContext;

class OneHotEncoder {
 public:
  explicit OneHotEncoder(const sdk::Node& node) {
    const std::vector<int64_t> ints = node.attr_ints("cats_int64s");
    const std::vector<std::string> strings = node.attr_strings("cats_strings");
    if (!ints.empty() && !strings.empty()) sdk::fail_invalid(kOp + ": cats_int64s and cats_strings are both set; one only");
    if (ints.empty() && strings.empty()) sdk::fail_invalid(kOp + ": one of cats_int64s and cats_strings is required");
    string_cats_ = !strings.empty();
    count_ = static_cast<int64_t>(string_cats_ ? strings.size() : ints.size());
    for (size_t i = 0; i < ints.size(); ++i) int_index_.emplace(ints[i], static_cast<int64_t>(i));  // first wins
    for (size_t i = 0; i < strings.size(); ++i) string_index_.emplace(strings[i], static_cast<int64_t>(i));
    zeros_ = node.attr_int("zeros", 1) != 0;
  }

  void compute(KernelContext& ctx) const {
    const sdk::ConstTensor x = ctx.required_input(0);
    const bool string_x = x.dtype() == LOOM_DTYPE_STRING;
    if (string_x != string_cats_)
      sdk::fail_invalid(kOp + ": X is " + sdk::dtype_name(x.dtype()) + " but the categories are " +
                        (string_cats_ ? "cats_strings" : "cats_int64s"));
    Shape ys = x.shape();
    ys.push_back(count_);
    sdk::checked_element_count(ys, kOp + ": output size");
    std::vector<int64_t> hit(static_cast<size_t>(x.size()), -1);
    if (string_x) {
      for (int64_t i = 0; i < x.size(); ++i) {
        auto it = string_index_.find(std::string(x.string_at(i)));
        if (it != string_index_.end()) hit[static_cast<size_t>(i)] = it->second;
        else if (!zeros_) sdk::fail_invalid(kOp + ": '" + std::string(x.string_at(i)) + "' is not a category (zeros = 0)");
      }
    } else {
      dispatch<TypeList<int64_t, int32_t, float, double>>(x.dtype(), kOp, [&](auto tag) {
        using T = decltype(tag);
        const T* p = x.size() > 0 ? x.data<T>() : nullptr;
        for (int64_t i = 0; i < x.size(); ++i) {
          const double v = static_cast<double>(p[i]);
          int64_t k = -1;
          if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9.2e18) {
            auto it = int_index_.find(static_cast<int64_t>(v));
            if (it != int_index_.end()) k = it->second;
          }
          if (k < 0 && !zeros_) sdk::fail_invalid(kOp + ": " + std::to_string(v) + " is not a category (zeros = 0)");
          hit[static_cast<size_t>(i)] = k;
        }
      });
    }
    sdk::Tensor y = ctx.output(0, ys, LOOM_DTYPE_FLOAT);
    if (y.size() == 0) return;
    float* py = y.mutable_data<float>();
    std::fill(py, py + y.size(), 0.0f);
    for (size_t i = 0; i < hit.size(); ++i)
      if (hit[i] >= 0) py[static_cast<int64_t>(i) * count_ + hit[i]] = 1.0f;
  }

 private:
  inline static const std::string kOp = "OneHotEncoder";
  bool string_cats_ = false, zeros_ = true;
  int64_t count_ = 0;
  std::map<int64_t, int64_t> int_index_;
  std::unordered_map<std::string, int64_t> string_index_;
};

class FeatureVectorizer {
 public:
  explicit FeatureVectorizer(const sdk::Node& node) {
    dims_ = node.attr_ints("inputdimensions");
    for (int64_t d : dims_) {
      if (d < 0) sdk::fail_invalid(kOp + ": inputdimensions holds a negative size " + std::to_string(d));
      total_ = sdk::checked_add(total_, d, kOp + ": sum of inputdimensions");
    }
  }

  void compute(KernelContext& ctx) const {
    const size_t inputs = ctx.input_count();
    if (inputs != dims_.size())
      sdk::fail_invalid(kOp + ": " + std::to_string(inputs) + " inputs for " + std::to_string(dims_.size()) +
                        " inputdimensions entries");
    int64_t rows = -1;
    std::vector<ml::Features> parts;
    for (size_t k = 0; k < inputs; ++k) {
      const sdk::ConstTensor t = ctx.required_input(k);
      const Shape s = t.shape();
      if (s.empty()) sdk::fail_invalid(kOp + ": input " + std::to_string(k) + " is a scalar; inputs must be 1-D or more");
      ml::Features f;
      f.rows = s.size() == 1 ? 1 : s[0];
      f.cols = f.rows == 0 ? 0 : t.size() / f.rows;
      if (s.size() > 1 && f.rows == 0) f.cols = 0;
      f.values.resize(static_cast<size_t>(t.size()));
      if (t.size() > 0)
        dispatch<TypeList<float, double, int64_t, int32_t>>(t.dtype(), kOp, [&](auto tag) {
          using T = decltype(tag);
          const T* p = t.data<T>();
          for (size_t i = 0; i < f.values.size(); ++i) f.values[i] = static_cast<double>(p[i]);
        });
      if (rows >= 0 && f.rows != rows)
        sdk::fail_invalid(kOp + ": input " + std::to_string(k) + " has " + std::to_string(f.rows) + " rows, input 0 has " +
                          std::to_string(rows));
      rows = f.rows;
      parts.push_back(std::move(f));
    }
    if (rows < 0) rows = 0;
    sdk::checked_mul(rows, total_, kOp + ": output size");
    // Written in place: the host allocates (and bounds) the output.
    sdk::Tensor y = ctx.output(0, {rows, total_}, LOOM_DTYPE_FLOAT);
    if (y.size() == 0) return;
    float* py = y.mutable_data<float>();
    std::fill(py, py + y.size(), 0.0f);
    int64_t offset = 0;
    for (size_t k = 0; k < parts.size(); ++k) {
      const ml::Features& f = parts[k];
      const int64_t take = std::min(f.cols, dims_[k]);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < take; ++j)
          py[r * total_ + offset + j] = static_cast<float>(f.values[static_cast<size_t>(r * f.cols + j)]);
      offset += dims_[k];
    }
  }

 private:
  inline static const std::string kOp = "FeatureVectorizer";
  std::vector<int64_t> dims_;
  int64_t total_ = 0;
};

// CategoryMapper: string X -> int64 Y through cats_strings -> cats_int64s
// (unknown: default_int64), int64 X -> string Y the other way (unknown:
// default_string).
class CategoryMapper {
 public:
  explicit CategoryMapper(const sdk::Node& node) {
    strings_ = node.attr_strings("cats_strings");
    ints_ = node.attr_ints("cats_int64s");
    ml::expect_length(kOp, "cats_int64s", ints_.size(), strings_.size(),
                      std::to_string(strings_.size()) + " cats_strings");
    for (size_t i = 0; i < strings_.size(); ++i) {
      to_int_.emplace(strings_[i], ints_[i]);
      to_string_.emplace(ints_[i], strings_[i]);
    }
    default_int_ = node.attr_int("default_int64", -1);
    default_string_ = node.attr_string("default_string", "_Unused");
  }

  void compute(KernelContext& ctx) const {
    const sdk::ConstTensor x = ctx.required_input(0);
    if (x.dtype() == LOOM_DTYPE_STRING) {
      sdk::Tensor y = ctx.output(0, x.shape(), LOOM_DTYPE_INT64);
      for (int64_t i = 0; i < x.size(); ++i) {
        auto it = to_int_.find(std::string(x.string_at(i)));
        y.mutable_data<int64_t>()[i] = it == to_int_.end() ? default_int_ : it->second;
      }
    } else if (x.dtype() == LOOM_DTYPE_INT64) {
      sdk::Tensor y = ctx.output(0, x.shape(), LOOM_DTYPE_STRING);
      for (int64_t i = 0; i < x.size(); ++i) {
        auto it = to_string_.find(x.data<int64_t>()[i]);
        y.set_string(i, it == to_string_.end() ? default_string_ : it->second);
      }
    } else {
      sdk::fail_invalid(kOp + ": X must be string or int64, got " + sdk::dtype_name(x.dtype()));
    }
  }

 private:
  inline static const std::string kOp = "CategoryMapper";
  std::vector<std::string> strings_;
  std::vector<int64_t> ints_;
  std::unordered_map<std::string, int64_t> to_int_;
  std::map<int64_t, std::string> to_string_;
  int64_t default_int_ = -1;
  std::string default_string_;
};

}  // namespace

void register_ml_encode_kernels(sdk::KernelRegistry& r) {
  r.add_class<OneHotEncoder>("ai.onnx.ml", "OneHotEncoder", 1, LOOM_OPSET_OPEN_END);
  r.add_class<FeatureVectorizer>("ai.onnx.ml", "FeatureVectorizer", 1, LOOM_OPSET_OPEN_END);
  r.add_class<CategoryMapper>("ai.onnx.ml", "CategoryMapper", 1, LOOM_OPSET_OPEN_END);
}

}  // namespace loom::reference
