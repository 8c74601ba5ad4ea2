// ai.onnx.ml LinearClassifier and LinearRegressor (opset 1): scores =
// X . coefficients^T + intercepts, one row of coefficients per class or
// target, then the post transform. A classifier with one row of
// coefficients and two labels is binary: its scores are [-s, s], as in
// ONNX's reference and ONNX Runtime.
#include "kernels/ml_common.h"

namespace loom::reference {
namespace {

using sdk::KernelContext;

// coefficients as `rows` rows of `cols` (X's feature count), intercepts
// none or one per row; returns the rows' scores for one X row.
struct LinearModel {
  std::vector<double> coefficients, intercepts;

  LinearModel(const sdk::Node& node, const std::string& op) {
    const std::vector<float> c = node.attr_floats("coefficients");
    const std::vector<float> i = node.attr_floats("intercepts");
    if (c.empty()) sdk::fail_invalid(op + ": coefficients are required");
    coefficients.assign(c.begin(), c.end());
    intercepts.assign(i.begin(), i.end());
  }
  // The number of coefficient rows for `cols` features; refuses a count of
  // coefficients that is not a multiple of it.
  int64_t rows_for(int64_t cols, const std::string& op) const {
    const int64_t n = static_cast<int64_t>(coefficients.size());
    if (cols <= 0 || n % cols != 0)
      sdk::fail_invalid(op + ": " + std::to_string(n) + " coefficients do not split into rows of " +
                        std::to_string(cols) + " features (X's last dim)");
    const int64_t rows = n / cols;
    if (!intercepts.empty()) ml::expect_length(op, "intercepts", intercepts.size(), static_cast<size_t>(rows), "one per coefficient row");
    return rows;
  }
  void scores(const double* x, int64_t cols, int64_t rows, double* out) const {
    for (int64_t k = 0; k < rows; ++k) {
      double s = intercepts.empty() ? 0.0 : intercepts[static_cast<size_t>(k)];
      const double* c = coefficients.data() + k * cols;
      for (int64_t j = 0; j < cols; ++j) s += x[j] * c[j];
      out[k] = s;
    }
  }
};

class LinearClassifier {
 public:
  explicit LinearClassifier(const sdk::Node& node) : model_(node, kOp) {
    labels_ = ml::ClassLabels::read(node, "classlabels_ints", kOp);
    post_ = ml::read_post_transform(node, kOp);
  }

  void compute(KernelContext& ctx) const {
    const ml::Features x = ml::read_features(ctx.required_input(0), kOp);
    const int64_t rows = model_.rows_for(x.cols, kOp);
    const int64_t n = static_cast<int64_t>(labels_.size());
    const bool binary = rows == 1 && n == 2;
    const int64_t width = binary ? 2 : rows;
    if (width > 1 && n > 0 && width != n)
      sdk::fail_invalid(kOp + ": " + std::to_string(rows) + " rows of coefficients for " + std::to_string(n) +
                        " class labels");
    std::vector<double> z(static_cast<size_t>(sdk::checked_mul(x.rows, width, kOp + ": output size")));
    std::vector<int64_t> picked(static_cast<size_t>(x.rows), -1), raw(static_cast<size_t>(x.rows), 0);
    for (int64_t r = 0; r < x.rows; ++r) {
      double* s = z.data() + r * width;
      model_.scores(x.row(r), x.cols, rows, s);
      if (binary) {
        s[1] = s[0];
        s[0] = -s[1];
      }
      ml::apply_post_transform(post_, s, width);
      const size_t i = static_cast<size_t>(r);
      if (width > 1) {
        const int64_t best = ml::argmax(s, width);
        if (n > 0) picked[i] = best;
        else raw[i] = best;
      } else {
        // One score and no pair of labels: the first label (or 1) when the
        // score passes 0 (0.5 after a transform), else 0.
        const bool pass = s[0] >= (post_ == ml::PostTransform::kNone ? 0.0 : 0.5);
        if (labels_.strings) picked[i] = pass ? 0 : -1;
        else raw[i] = pass ? (n > 0 ? labels_.ints[0] : 1) : 0;
      }
    }
    labels_.write(ctx, 0, picked, raw);
    ml::write_floats(ctx, 1, {x.rows, width}, z);
  }

 private:
  inline static const std::string kOp = "LinearClassifier";
  LinearModel model_;
  ml::ClassLabels labels_;
  ml::PostTransform post_ = ml::PostTransform::kNone;
};

class LinearRegressor {
 public:
  explicit LinearRegressor(const sdk::Node& node) : model_(node, kOp) {
    targets_ = node.attr_int("targets", 1);
    if (targets_ <= 0) sdk::fail_invalid(kOp + ": targets must be positive, got " + std::to_string(targets_));
    post_ = ml::read_post_transform(node, kOp);
  }

  void compute(KernelContext& ctx) const {
    const ml::Features x = ml::read_features(ctx.required_input(0), kOp);
    const int64_t rows = model_.rows_for(x.cols, kOp);
    if (rows != targets_)
      sdk::fail_invalid(kOp + ": " + std::to_string(model_.coefficients.size()) + " coefficients for " +
                        std::to_string(targets_) + " targets of " + std::to_string(x.cols) + " features");
    std::vector<double> y(static_cast<size_t>(sdk::checked_mul(x.rows, targets_, kOp + ": output size")));
    for (int64_t r = 0; r < x.rows; ++r) {
      double* s = y.data() + r * targets_;
      model_.scores(x.row(r), x.cols, targets_, s);
      ml::apply_post_transform(post_, s, targets_);
    }
    ml::write_floats(ctx, 0, {x.rows, targets_}, y);
  }

 private:
  inline static const std::string kOp = "LinearRegressor";
  LinearModel model_;
  int64_t targets_ = 1;
  ml::PostTransform post_ = ml::PostTransform::kNone;
};

}  // namespace

void register_ml_linear_kernels(sdk::KernelRegistry& r) {
  r.add_class<LinearClassifier>("ai.onnx.ml", "LinearClassifier", 1, LOOM_OPSET_OPEN_END);
  r.add_class<LinearRegressor>("ai.onnx.ml", "LinearRegressor", 1, LOOM_OPSET_OPEN_END);
}

}  // namespace loom::reference
