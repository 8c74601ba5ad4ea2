// ai.onnx.ml feature transforms (opset 1): Scaler ((x - offset) * scale per
// feature), Normalizer (each row divided by its MAX, L1 or L2 norm; a zero
// norm leaves the row as is, as ONNX Runtime and ONNX's newest tests do,
// and MAX is the row's largest value, not its largest magnitude) and
// Imputer (a replaced value, or NaN, swapped for the feature's imputed
// value).
#include <cmath>

#include "kernels/ml_common.h"

namespace loom::reference {
namespace {

using sdk::KernelContext;

// A per-feature list: one value for all features or one per feature.
double per_feature(const std::vector<double>& v, int64_t j) { return v.size() == 1 ? v[0] : v[static_cast<size_t>(j)]; }

void check_per_feature(const std::string& op, const std::string& name, size_t size, int64_t cols) {
  if (size != 1 && size != static_cast<size_t>(cols))
    sdk::fail_invalid(op + ": " + name + " has " + std::to_string(size) + " entries for " + std::to_string(cols) +
                      " features (X's last dim); expected 1 or " + std::to_string(cols));
}

class Scaler {
 public:
  explicit Scaler(const sdk::Node& node) {
    const std::vector<float> o = node.attr_floats("offset"), s = node.attr_floats("scale");
    offset_.assign(o.begin(), o.end());
    scale_.assign(s.begin(), s.end());
    if (offset_.empty()) offset_ = {0.0};
    if (scale_.empty()) scale_ = {1.0};
  }
  void compute(KernelContext& ctx) const {
    const sdk::ConstTensor t = ctx.required_input(0);
    const ml::Features x = ml::read_features(t, kOp);
    check_per_feature(kOp, "offset", offset_.size(), x.cols);
    check_per_feature(kOp, "scale", scale_.size(), x.cols);
    std::vector<double> y(x.values.size());
    for (int64_t r = 0; r < x.rows; ++r)
      for (int64_t j = 0; j < x.cols; ++j) {
        const size_t i = static_cast<size_t>(r * x.cols + j);
        y[i] = (x.values[i] - per_feature(offset_, j)) * per_feature(scale_, j);
      }
    ml::write_floats(ctx, 0, t.shape(), y);
  }

 private:
  inline static const std::string kOp = "Scaler";
  std::vector<double> offset_, scale_;
};

class Normalizer {
 public:
  explicit Normalizer(const sdk::Node& node) {
    norm_ = node.attr_string("norm", "MAX");
    if (norm_ != "MAX" && norm_ != "L1" && norm_ != "L2")
      sdk::fail_invalid(kOp + ": norm '" + norm_ + "' is not one of MAX, L1, L2");
  }
  void compute(KernelContext& ctx) const {
    const sdk::ConstTensor t = ctx.required_input(0);
    ml::Features x = ml::read_features(t, kOp);
    for (int64_t r = 0; r < x.rows; ++r) {
      double* v = x.values.data() + r * x.cols;
      double d = 0;
      if (norm_ == "MAX") {
        d = x.cols > 0 ? v[0] : 0.0;
        for (int64_t j = 1; j < x.cols; ++j) d = std::max(d, v[j]);
      } else if (norm_ == "L1") {
        for (int64_t j = 0; j < x.cols; ++j) d += std::fabs(v[j]);
      } else {
        for (int64_t j = 0; j < x.cols; ++j) d += v[j] * v[j];
        d = std::sqrt(d);
      }
      if (d != 0)
        for (int64_t j = 0; j < x.cols; ++j) v[j] /= d;
    }
    ml::write_floats(ctx, 0, t.shape(), x.values);
  }

 private:
  inline static const std::string kOp = "Normalizer";
  std::string norm_;
};

// Imputer: float / double X uses imputed_value_floats and
// replaced_value_float (NaN matches NaN); int64 / int32 X the int64 forms.
// The output has X's type and shape.
class Imputer {
 public:
  explicit Imputer(const sdk::Node& node) {
    floats_ = node.attr_floats("imputed_value_floats");
    ints_ = node.attr_ints("imputed_value_int64s");
    replaced_float_ = node.attr_float("replaced_value_float", 0.0f);
    replaced_int_ = node.attr_int("replaced_value_int64", 0);
    if (floats_.empty() && ints_.empty())
      sdk::fail_invalid(kOp + ": one of imputed_value_floats and imputed_value_int64s is required");
  }
  void compute(KernelContext& ctx) const {
    const sdk::ConstTensor x = ctx.required_input(0);
    const Shape s = x.shape();
    if (s.size() != 1 && s.size() != 2)
      sdk::fail_invalid(kOp + ": X must be 1-D or 2-D, got rank " + std::to_string(s.size()));
    const int64_t cols = s.back();
    sdk::Tensor y = ctx.output(0, s, x.dtype());
    dispatch<TypeList<float, double, int64_t, int32_t>>(x.dtype(), kOp, [&](auto tag) {
      using T = decltype(tag);
      constexpr bool real = std::is_floating_point_v<T>;
      const size_t count = real ? floats_.size() : ints_.size();
      if (count == 0)
        sdk::fail_invalid(kOp + ": X is " + sdk::dtype_name(x.dtype()) + " but " +
                          (real ? "imputed_value_floats" : "imputed_value_int64s") + " is empty");
      check_per_feature(kOp, real ? "imputed_value_floats" : "imputed_value_int64s", count, cols);
      if (y.size() == 0) return;
      const T* px = x.data<T>();
      T* py = y.mutable_data<T>();
      for (int64_t i = 0; i < x.size(); ++i) {
        const int64_t j = i % cols;
        const size_t k = count == 1 ? 0 : static_cast<size_t>(j);
        if constexpr (real) {
          const bool hit = std::isnan(replaced_float_) ? std::isnan(px[i]) : px[i] == static_cast<T>(replaced_float_);
          py[i] = hit ? static_cast<T>(floats_[k]) : px[i];
        } else {
          py[i] = static_cast<int64_t>(px[i]) == replaced_int_ ? static_cast<T>(ints_[k]) : px[i];
        }
      }
    });
  }

 private:
  inline static const std::string kOp = "Imputer";
  std::vector<float> floats_;
  std::vector<int64_t> ints_;
  float replaced_float_ = 0;
  int64_t replaced_int_ = 0;
};

}  // namespace

void register_ml_transform_kernels(sdk::KernelRegistry& r) {
  r.add_class<Scaler>("ai.onnx.ml", "Scaler", 1, LOOM_OPSET_OPEN_END);
  r.add_class<Normalizer>("ai.onnx.ml", "Normalizer", 1, LOOM_OPSET_OPEN_END);
  r.add_class<Imputer>("ai.onnx.ml", "Imputer", 1, LOOM_OPSET_OPEN_END);
}

}  // namespace loom::reference
