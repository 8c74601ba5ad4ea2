// ai.onnx.ml SVMClassifier and SVMRegressor (opset 1), as libsvm / ONNX's
// reference compute them. With support vectors (vectors_per_class /
// n_supports) each row's kernel values against them (LINEAR, POLY, RBF or
// SIGMOID, parameters gamma, coef0, degree) are combined with the dual
// coefficients: one-vs-one decision values and votes for the classifier,
// with prob_a / prob_b turning the decision values into class
// probabilities (Platt scaling and libsvm's pairwise coupling); without
// them the model is linear (one coefficient row per class). SVMRegressor's
// one_class mode outputs +1 / -1.
#include <cmath>

#include "kernels/ml_common.h"

namespace loom::reference {
namespace {

using sdk::KernelContext;

enum class Kernel { kLinear, kPoly, kRbf, kSigmoid };

struct SvmKernel {
  Kernel type = Kernel::kLinear;
  double gamma = 0, coef0 = 0;
  int64_t degree = 0;

  SvmKernel(const sdk::Node& node, const std::string& op) {
    const std::string t = node.attr_string("kernel_type", "LINEAR");
    if (t == "LINEAR") type = Kernel::kLinear;
    else if (t == "POLY") type = Kernel::kPoly;
    else if (t == "RBF") type = Kernel::kRbf;
    else if (t == "SIGMOID") type = Kernel::kSigmoid;
    else sdk::fail_invalid(op + ": kernel_type '" + t + "' is not one of LINEAR, POLY, RBF, SIGMOID");
    const std::vector<float> p = node.attr_floats("kernel_params");
    if (!p.empty()) {
      ml::expect_length(op, "kernel_params", p.size(), 3, "gamma, coef0, degree");
      gamma = p[0];
      coef0 = p[1];
      if (!(std::fabs(p[2]) <= 1e6f))
        sdk::fail_invalid(op + ": kernel_params' degree " + std::to_string(p[2]) + " is out of range");
      degree = static_cast<int64_t>(p[2]);
    }
  }
  double operator()(const double* a, const double* b, int64_t n) const {
    double s = 0;
    if (type == Kernel::kRbf) {
      for (int64_t i = 0; i < n; ++i) s += (a[i] - b[i]) * (a[i] - b[i]);
      return std::exp(-gamma * s);
    }
    for (int64_t i = 0; i < n; ++i) s += a[i] * b[i];
    if (type == Kernel::kPoly) return std::pow(s * gamma + coef0, static_cast<double>(degree));
    if (type == Kernel::kSigmoid) return std::tanh(s * gamma + coef0);
    return s;
  }
};

double dot(const double* a, const double* b, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

std::vector<double> doubles(const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); }

// libsvm's pairwise coupling: class probabilities from the k x k matrix r
// of pairwise probabilities.
std::vector<double> multiclass_probability(int64_t k, const std::vector<double>& r) {
  std::vector<double> q(static_cast<size_t>(k * k), 0.0), qp(static_cast<size_t>(k)), p(static_cast<size_t>(k));
  auto Q = [&](int64_t i, int64_t j) -> double& { return q[static_cast<size_t>(i * k + j)]; };
  auto R = [&](int64_t i, int64_t j) { return r[static_cast<size_t>(i * k + j)]; };
  for (int64_t t = 0; t < k; ++t) {
    p[static_cast<size_t>(t)] = 1.0 / static_cast<double>(k);
    for (int64_t j = 0; j < t; ++j) {
      Q(t, t) += R(j, t) * R(j, t);
      Q(t, j) = Q(j, t);
    }
    for (int64_t j = t + 1; j < k; ++j) {
      Q(t, t) += R(j, t) * R(j, t);
      Q(t, j) = -R(j, t) * R(t, j);
    }
  }
  const double eps = 0.005 / static_cast<double>(k);
  for (int64_t iter = 0; iter < std::max<int64_t>(100, k); ++iter) {
    double pqp = 0;
    for (int64_t t = 0; t < k; ++t) {
      qp[static_cast<size_t>(t)] = 0;
      for (int64_t j = 0; j < k; ++j) qp[static_cast<size_t>(t)] += Q(t, j) * p[static_cast<size_t>(j)];
      pqp += p[static_cast<size_t>(t)] * qp[static_cast<size_t>(t)];
    }
    double max_error = 0;
    for (int64_t t = 0; t < k; ++t) max_error = std::max(max_error, std::fabs(qp[static_cast<size_t>(t)] - pqp));
    if (max_error < eps) break;
    for (int64_t t = 0; t < k; ++t) {
      const double diff = (-qp[static_cast<size_t>(t)] + pqp) / Q(t, t);
      p[static_cast<size_t>(t)] += diff;
      pqp = (pqp + diff * (diff * Q(t, t) + 2 * qp[static_cast<size_t>(t)])) / (1 + diff) / (1 + diff);
      for (int64_t j = 0; j < k; ++j) {
        qp[static_cast<size_t>(j)] = (qp[static_cast<size_t>(j)] + diff * Q(t, j)) / (1 + diff);
        p[static_cast<size_t>(j)] /= (1 + diff);
      }
    }
  }
  return p;
}

class SVMClassifier {
 public:
  explicit SVMClassifier(const sdk::Node& node) : kernel_(node, kOp) {
    labels_ = ml::ClassLabels::read(node, "classlabels_ints", kOp);
    classes_ = std::max<int64_t>(static_cast<int64_t>(labels_.size()), 1);
    coefficients_ = doubles(node.attr_floats("coefficients"));
    support_ = doubles(node.attr_floats("support_vectors"));
    rho_ = doubles(node.attr_floats("rho"));
    prob_a_ = doubles(node.attr_floats("prob_a"));
    prob_b_ = doubles(node.attr_floats("prob_b"));
    per_class_ = node.attr_ints("vectors_per_class");
    post_ = ml::read_post_transform(node, kOp);
    if (rho_.empty()) sdk::fail_invalid(kOp + ": rho is required");
    if (coefficients_.empty()) sdk::fail_invalid(kOp + ": coefficients are required");
    for (int64_t v : per_class_) {
      if (v < 0) sdk::fail_invalid(kOp + ": vectors_per_class holds a negative count " + std::to_string(v));
      starts_.push_back(vectors_);
      vectors_ = sdk::checked_add(vectors_, v, kOp + ": vectors_per_class sum");
    }
    if (vectors_ > 0) {
      if (classes_ < 2) sdk::fail_invalid(kOp + ": a support-vector classifier needs at least two class labels");
      ml::expect_length(kOp, "vectors_per_class", per_class_.size(), static_cast<size_t>(classes_), "one per class label");
      if (support_.size() % static_cast<size_t>(vectors_) != 0 || support_.empty())
        sdk::fail_invalid(kOp + ": " + std::to_string(support_.size()) + " support_vectors values do not split into " +
                          std::to_string(vectors_) + " vectors");
      features_ = static_cast<int64_t>(support_.size()) / vectors_;
      const int64_t pairs = classes_ * (classes_ - 1) / 2;
      const int64_t expected = sdk::checked_mul(classes_ - 1, vectors_, kOp + ": coefficient count");
      ml::expect_length(kOp, "coefficients", coefficients_.size(), static_cast<size_t>(expected),
                        "(classes - 1) x support vectors");
      ml::expect_length(kOp, "rho", rho_.size(), static_cast<size_t>(pairs), "one per pair of classes");
      if (!prob_a_.empty() || !prob_b_.empty()) {
        ml::expect_length(kOp, "prob_a", prob_a_.size(), static_cast<size_t>(pairs), "one per pair of classes");
        ml::expect_length(kOp, "prob_b", prob_b_.size(), static_cast<size_t>(pairs), "one per pair of classes");
        proba_ = true;
      }
      scores_ = proba_ ? classes_ : pairs;
    } else {
      if (coefficients_.size() % static_cast<size_t>(classes_) != 0)
        sdk::fail_invalid(kOp + ": " + std::to_string(coefficients_.size()) + " coefficients do not split into " +
                          std::to_string(classes_) + " class rows");
      features_ = static_cast<int64_t>(coefficients_.size()) / classes_;
      scores_ = classes_;
    }
    all_positive_ = *std::min_element(coefficients_.begin(), coefficients_.end()) >= 0;
    second_class_ = rho_.size() == 1 && labels_.size() == 2;
    width_ = scores_ >= 2 ? scores_ : (post_ == ml::PostTransform::kProbit || !second_class_ ? 1 : 2);
  }

  void compute(KernelContext& ctx) const {
    const ml::Features x = ml::read_features(ctx.required_input(0), kOp);
    if (x.cols != features_)
      sdk::fail_invalid(kOp + ": X has " + std::to_string(x.cols) + " features, the model " + std::to_string(features_));
    std::vector<double> z(static_cast<size_t>(sdk::checked_mul(x.rows, width_, kOp + ": output size")));
    std::vector<int64_t> picked(static_cast<size_t>(x.rows), -1), raw(static_cast<size_t>(x.rows), 0);
    std::vector<double> scores, votes, kernels(static_cast<size_t>(vectors_));
    for (int64_t r = 0; r < x.rows; ++r) {
      const double* row = x.row(r);
      scores.clear();
      votes.assign(vectors_ > 0 ? static_cast<size_t>(classes_) : 0, 0.0);
      if (vectors_ == 0) {
        for (int64_t j = 0; j < classes_; ++j)
          scores.push_back(rho_[0] + dot(row, coefficients_.data() + j * features_, features_));
      } else {
        for (int64_t j = 0; j < vectors_; ++j)
          kernels[static_cast<size_t>(j)] = kernel_(row, support_.data() + j * features_, features_);
        one_vs_one(kernels, scores, votes);
        if (proba_) scores = probabilities(scores);
      }
      // The winning class: most votes, else the highest score. With votes
      // the weight the two-label rule below looks at is 0, as in ONNX
      // Runtime (ONNX's reference passes the vote count, which makes a model
      // whose coefficients are all >= 0 always answer the second label).
      const std::vector<double>& by = votes.empty() ? scores : votes;
      const int64_t best = ml::argmax(by.data(), static_cast<int64_t>(by.size()));
      const double best_weight = votes.empty() ? by[static_cast<size_t>(best)] : 0.0;
      const size_t i = static_cast<size_t>(r);
      if (rho_.size() == 1) {
        if (labels_.size() == 2) picked[i] = (!proba_ && all_positive_ && best_weight >= 0.5) ? 1 : best;
        else if (labels_.strings) picked[i] = best_weight > 0 ? 1 : 0;
        else raw[i] = best_weight > 0 ? 1 : 0;
      } else if (!labels_.empty()) {
        picked[i] = best;
      } else {
        raw[i] = best;
      }
      write_scores(scores, z.data() + r * width_);
    }
    labels_.write(ctx, 0, picked, raw);
    ml::write_floats(ctx, 1, {x.rows, width_}, z);
  }

 private:
  inline static const std::string kOp = "SVMClassifier";

  void one_vs_one(const std::vector<double>& k, std::vector<double>& scores, std::vector<double>& votes) const {
    size_t e = 0;
    for (int64_t i = 0; i < classes_; ++i) {
      const int64_t si = starts_[static_cast<size_t>(i)], ci = per_class_[static_cast<size_t>(i)];
      for (int64_t j = i + 1; j < classes_; ++j) {
        const int64_t sj = starts_[static_cast<size_t>(j)], cj = per_class_[static_cast<size_t>(j)];
        double s = rho_[e++];
        const double* a = coefficients_.data() + (j - 1) * vectors_;
        const double* b = coefficients_.data() + i * vectors_;
        for (int64_t v = si; v < si + ci; ++v) s += a[v] * k[static_cast<size_t>(v)];
        for (int64_t v = sj; v < sj + cj; ++v) s += b[v] * k[static_cast<size_t>(v)];
        scores.push_back(s);
        votes[static_cast<size_t>(s > 0 ? i : j)] += 1;
      }
    }
  }

  std::vector<double> probabilities(const std::vector<double>& decision) const {
    std::vector<double> pair(static_cast<size_t>(classes_ * classes_), 0.0);
    size_t e = 0;
    for (int64_t i = 0; i < classes_; ++i)
      for (int64_t j = i + 1; j < classes_; ++j, ++e) {
        double v = 1.0 - ml::logistic(decision[e] * prob_a_[e] + prob_b_[e]);
        v = std::min(std::max(v, 1e-7), 1 - 1e-7);
        pair[static_cast<size_t>(i * classes_ + j)] = v;
        pair[static_cast<size_t>(j * classes_ + i)] = 1 - v;
      }
    return multiclass_probability(classes_, pair);
  }

  // The row's output scores: transformed when there are several; a single
  // decision value s becomes [-s, s] (transformed) for a two-label model.
  void write_scores(std::vector<double>& s, double* out) const {
    if (s.size() >= 2) {
      ml::apply_post_transform(post_, s.data(), static_cast<int64_t>(s.size()));
      std::copy(s.begin(), s.end(), out);
    } else if (post_ == ml::PostTransform::kProbit) {
      out[0] = ml::probit(s[0]);
    } else if (second_class_) {
      out[0] = -s[0];
      out[1] = s[0];
      ml::apply_post_transform(post_, out, 2);
    } else {
      out[0] = s[0];
    }
  }

  SvmKernel kernel_;
  ml::ClassLabels labels_;
  int64_t classes_ = 1, vectors_ = 0, features_ = 0, scores_ = 0, width_ = 0;
  std::vector<double> coefficients_, support_, rho_, prob_a_, prob_b_;
  std::vector<int64_t> per_class_, starts_;
  ml::PostTransform post_ = ml::PostTransform::kNone;
  bool proba_ = false, all_positive_ = true, second_class_ = false;
};

class SVMRegressor {
 public:
  explicit SVMRegressor(const sdk::Node& node) : kernel_(node, kOp) {
    coefficients_ = doubles(node.attr_floats("coefficients"));
    support_ = doubles(node.attr_floats("support_vectors"));
    rho_ = doubles(node.attr_floats("rho"));
    supports_ = node.attr_int("n_supports", 0);
    one_class_ = node.attr_int("one_class", 0) != 0;
    post_ = ml::read_post_transform(node, kOp);
    if (rho_.empty()) sdk::fail_invalid(kOp + ": rho is required");
    if (coefficients_.empty()) sdk::fail_invalid(kOp + ": coefficients are required");
    if (supports_ < 0) sdk::fail_invalid(kOp + ": n_supports is negative");
    if (supports_ > 0) {
      ml::expect_length(kOp, "coefficients", coefficients_.size(), static_cast<size_t>(supports_), "one per support vector");
      if (support_.empty() || support_.size() % static_cast<size_t>(supports_) != 0)
        sdk::fail_invalid(kOp + ": " + std::to_string(support_.size()) + " support_vectors values do not split into " +
                          std::to_string(supports_) + " vectors");
      features_ = static_cast<int64_t>(support_.size()) / supports_;
    } else {
      features_ = static_cast<int64_t>(coefficients_.size());
    }
  }

  void compute(KernelContext& ctx) const {
    const ml::Features x = ml::read_features(ctx.required_input(0), kOp);
    if (x.cols != features_)
      sdk::fail_invalid(kOp + ": X has " + std::to_string(x.cols) + " features, the model " + std::to_string(features_));
    std::vector<double> y(static_cast<size_t>(x.rows));
    for (int64_t r = 0; r < x.rows; ++r) {
      double s = rho_[0];
      if (supports_ > 0) {
        for (int64_t j = 0; j < supports_; ++j)
          s += coefficients_[static_cast<size_t>(j)] * kernel_(x.row(r), support_.data() + j * features_, features_);
      } else {
        s += dot(x.row(r), coefficients_.data(), features_);
      }
      if (one_class_) s = s > 0 ? 1.0 : -1.0;
      ml::apply_post_transform(post_, &s, 1);
      y[static_cast<size_t>(r)] = s;
    }
    ml::write_floats(ctx, 0, {x.rows, 1}, y);
  }

 private:
  inline static const std::string kOp = "SVMRegressor";
  SvmKernel kernel_;
  std::vector<double> coefficients_, support_, rho_;
  int64_t supports_ = 0, features_ = 0;
  bool one_class_ = false;
  ml::PostTransform post_ = ml::PostTransform::kNone;
};

}  // namespace

void register_ml_svm_kernels(sdk::KernelRegistry& r) {
  r.add_class<SVMClassifier>("ai.onnx.ml", "SVMClassifier", 1, LOOM_OPSET_OPEN_END);
  r.add_class<SVMRegressor>("ai.onnx.ml", "SVMRegressor", 1, LOOM_OPSET_OPEN_END);
}

}  // namespace loom::reference
