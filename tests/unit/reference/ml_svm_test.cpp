// ai.onnx.ml SVMRegressor and SVMClassifier on the reference EP: the four
// kernels, linear (no support vector) mode, one_class, the binary and
// three-class one-vs-one classifiers with and without prob_a / prob_b, and
// attribute counts that do not fit refused. Kernel values are worked out
// in the comments; the classifier's expected scores come from a plain
// Python port of ONNX's reference (op_svm_classifier.py).
#include <cmath>

#include "unit/reference/ml_test_util.h"

namespace loom {
namespace {

using ::onnx::TensorProto;
using testing::expect_floats_near;
using testing::expect_refused;
using testing::MlNode;
using testing::ml_floats;
using testing::ml_logistic;
using testing::run_ok;

TEST(MlSvmTest, RegressorKernelsLinearModeAndOneClass) {
  // Support vectors [0, 0] and [1, 1], coefficients 1 and -1, rho 0.1; rows
  // [0, 0] and [1, 0].
  struct Case {
    std::string kernel;
    std::vector<float> params;
    std::vector<double> expected;
  };
  const double e1 = std::exp(-1.0);
  const std::vector<Case> cases = {
      // k = x . sv: 0, 0 and 0, 1.
      {"LINEAR", {}, {0.1, -0.9}},
      // (x . sv + 1)^2: 1, 1 and 1, 4.
      {"POLY", {1, 1, 2}, {0.1, -2.9}},
      // exp(-0.5 |x - sv|^2): 1, e^-1 and e^-0.5, e^-0.5.
      {"RBF", {0.5f, 0, 0}, {1 - e1 + 0.1, 0.1}},
      // tanh(x . sv): 0, 0 and 0, tanh 1.
      {"SIGMOID", {1, 0, 0}, {0.1, 0.1 - std::tanh(1.0)}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.kernel);
    MlNode g("SVMRegressor", 1, {{"x", ml_floats({2, 2}, {0, 0, 1, 0})}}, {{"y", TensorProto::FLOAT}});
    g.str("kernel_type", c.kernel).i("n_supports", 2).floats("support_vectors", {0, 0, 1, 1}).floats("coefficients", {1, -1}).floats("rho", {0.1f});
    if (!c.params.empty()) g.floats("kernel_params", c.params);
    expect_floats_near(run_ok(g).at(0), {2, 1}, c.expected);
  }
  // No support vectors: x . coefficients + rho: -0.5 and 2.5; one_class: -1, 1.
  for (int64_t one_class : {0, 1}) {
    MlNode g("SVMRegressor", 1, {{"x", testing::ml_int64s({2, 2}, {1, 1, 2, 0})}}, {{"y", TensorProto::FLOAT}});
    g.floats("coefficients", {1, -2}).floats("rho", {0.5f}).i("one_class", one_class);
    expect_floats_near(run_ok(g).at(0), {2, 1}, one_class ? std::vector<double>{-1, 1} : std::vector<double>{-0.5, 2.5});
  }
}

// Binary one-vs-one: one support vector per class ([0, 0], [1, 1]), dual
// coefficients 1 and -1, rho 0.1, linear kernel: s = 0.1 + k0 - k1. Rows
// [1, 0] and [0, 0] give s = -0.9 (vote for class 1) and 0.1 (class 0).
void binary_svc(MlNode& g) {
  g.ints("vectors_per_class", {1, 1}).floats("support_vectors", {0, 0, 1, 1}).floats("coefficients", {1, -1}).floats("rho", {0.1f});
}

TEST(MlSvmTest, BinaryClassifierScoresAndProbabilities) {
  const std::vector<std::pair<std::string, std::vector<double>>> cases = {
      {"NONE", {0.9, -0.9, -0.1, 0.1}},
      {"LOGISTIC", {ml_logistic(0.9), ml_logistic(-0.9), ml_logistic(-0.1), ml_logistic(0.1)}},
      {"PROBIT", {}},
  };
  for (const auto& [post, expected] : cases) {
    SCOPED_TRACE(post);
    MlNode g("SVMClassifier", 1, {{"x", ml_floats({2, 2}, {1, 0, 0, 0})}},
             {{"label", TensorProto::INT64}, {"scores", TensorProto::FLOAT}});
    binary_svc(g);
    g.ints("classlabels_ints", {4, 7}).str("post_transform", post);
    auto out = run_ok(g);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(testing::int64_values_of(out[0]), (std::vector<int64_t>{7, 4}));
    if (post == "PROBIT") {
      EXPECT_EQ(out[1].dims(), (Dims{2, 1}));  // one decision value, probit of it (NaN outside (0, 1))
    } else {
      expect_floats_near(out[1], {2, 2}, expected);
    }
  }
  // Coefficients all >= 0: the label still follows the vote (ONNX Runtime;
  // ONNX's reference would answer the second label): s = 0.1 + k0 + k1 is
  // 1.1 and 0.1, both votes for the first class.
  MlNode pos("SVMClassifier", 1, {{"x", ml_floats({2, 2}, {1, 0, 0, 0})}},
             {{"label", TensorProto::INT64}, {"scores", TensorProto::FLOAT}});
  pos.ints("vectors_per_class", {1, 1}).floats("support_vectors", {0, 0, 1, 1}).floats("coefficients", {1, 1}).floats("rho", {0.1f});
  pos.ints("classlabels_ints", {4, 7});
  auto votes = run_ok(pos);
  ASSERT_EQ(votes.size(), 2u);
  EXPECT_EQ(testing::int64_values_of(votes[0]), (std::vector<int64_t>{4, 4}));
  expect_floats_near(votes[1], {2, 2}, {-1.1, 1.1, -0.1, 0.1});
  // prob_a -2, prob_b 0.5: Platt scaling then pairwise coupling.
  MlNode p("SVMClassifier", 1, {{"x", ml_floats({2, 2}, {1, 0, 0, 0})}},
           {{"label", TensorProto::STRING}, {"scores", TensorProto::FLOAT}});
  binary_svc(p);
  p.strings("classlabels_strings", {"a", "b"}).floats("prob_a", {-2}).floats("prob_b", {0.5f});
  auto out = run_ok(p);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].strings(), (std::vector<std::string>{"b", "a"}));
  expect_floats_near(out[1], {2, 2}, {0.0909763, 0.9090237, 0.4252867, 0.5747133}, 1e-5);
}

// Three classes, one support vector each ([0, 0], [1, 0], [0, 1]),
// coefficients [[0.5, -0.5, 0.25], [0.75, 0.3, -0.6]], rho [0.1, -0.2, 0.3].
void three_class_svc(MlNode& g, const std::string& kernel) {
  g.ints("vectors_per_class", {1, 1, 1})
      .floats("support_vectors", {0, 0, 1, 0, 0, 1})
      .floats("coefficients", {0.5f, -0.5f, 0.25f, 0.75f, 0.3f, -0.6f})
      .floats("rho", {0.1f, -0.2f, 0.3f})
      .ints("classlabels_ints", {0, 1, 2})
      .str("kernel_type", kernel);
  if (kernel == "RBF") g.floats("kernel_params", {0.5f, 0, 0});
}

TEST(MlSvmTest, ThreeClassOneVsOneVotesAndProbabilities) {
  const Tensor rows = ml_floats({3, 2}, {1, 2, -1, 0.5f, 0.2f, 0.1f});
  {
    MlNode g("SVMClassifier", 1, {{"x", rows}}, {{"label", TensorProto::INT64}, {"scores", TensorProto::FLOAT}});
    three_class_svc(g, "LINEAR");
    auto out = run_ok(g);
    ASSERT_EQ(out.size(), 2u);
    // Votes [1, 1, 1] (a tie: the first), [1, 0, 2], [0, 2, 1].
    EXPECT_EQ(testing::int64_values_of(out[0]), (std::vector<int64_t>{0, 2, 1}));
    expect_floats_near(out[1], {3, 3}, {-0.4, 0.3, -0.6, 0.6, -0.075, -0.3, 0.0, -0.175, 0.3});
  }
  {
    MlNode g("SVMClassifier", 1, {{"x", rows}}, {{"label", TensorProto::INT64}, {"scores", TensorProto::FLOAT}});
    three_class_svc(g, "RBF");
    auto out = run_ok(g);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(testing::int64_values_of(out[0]), (std::vector<int64_t>{0, 0, 0}));
    expect_floats_near(out[1], {3, 3},
                       {0.0733749, -0.0464664, 0.1198729, 0.3079142, 0.3352614, 0.0146730, 0.2263913, 0.6949249, 0.1244963});
  }
  {
    MlNode g("SVMClassifier", 1, {{"x", rows}}, {{"label", TensorProto::INT64}, {"scores", TensorProto::FLOAT}});
    three_class_svc(g, "RBF");
    g.floats("prob_a", {-1.5f, -0.5f, -2.0f}).floats("prob_b", {0.1f, -0.2f, 0.05f});
    auto out = run_ok(g);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(testing::int64_values_of(out[0]), (std::vector<int64_t>{0, 0, 0}));
    expect_floats_near(out[1], {3, 3},
                       {0.3545853, 0.3514812, 0.2939335, 0.4182126, 0.2896757, 0.2921117, 0.4235428, 0.3228900, 0.2535673},
                       1e-5);
  }
}

TEST(MlSvmTest, LinearModeClassifier) {
  // No support vectors: one coefficient row per class plus rho[0]:
  // [2, 1] scores [1, -1], [0, 3] scores [-3, 3].
  MlNode g("SVMClassifier", 1, {{"x", ml_floats({2, 2}, {2, 1, 0, 3})}},
           {{"label", TensorProto::INT64}, {"scores", TensorProto::FLOAT}});
  g.floats("coefficients", {1, -1, -1, 1}).floats("rho", {0}).ints("classlabels_ints", {5, 6});
  auto out = run_ok(g);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(testing::int64_values_of(out[0]), (std::vector<int64_t>{5, 6}));
  expect_floats_near(out[1], {2, 2}, {1, -1, -3, 3});
}

TEST(MlSvmTest, NearMissModelsAreRefused) {
  auto classifier = [](MlNode& g) { g.ints("classlabels_ints", {0, 1}); };
  {
    MlNode g("SVMClassifier", 1, {{"x", ml_floats({1, 2}, {1, 0})}}, {{"label", TensorProto::INT64}, {"scores", TensorProto::FLOAT}});
    classifier(g);
    g.ints("vectors_per_class", {1, 1}).floats("support_vectors", {0, 0, 1}).floats("coefficients", {1, -1}).floats("rho", {0.1f});
    expect_refused(g, "3 support_vectors values do not split into 2 vectors");
  }
  {
    MlNode g("SVMClassifier", 1, {{"x", ml_floats({1, 2}, {1, 0})}}, {{"label", TensorProto::INT64}, {"scores", TensorProto::FLOAT}});
    classifier(g);
    g.ints("vectors_per_class", {1, 1}).floats("support_vectors", {0, 0, 1, 1}).floats("coefficients", {1, -1, 2}).floats("rho", {0.1f});
    expect_refused(g, "coefficients has 3 entries, expected 2");
  }
  {
    MlNode g("SVMClassifier", 1, {{"x", ml_floats({1, 2}, {1, 0})}}, {{"label", TensorProto::INT64}, {"scores", TensorProto::FLOAT}});
    classifier(g);
    binary_svc(g);
    g.floats("prob_a", {1, 2});
    expect_refused(g, "prob_a has 2 entries, expected 1");
  }
  {
    MlNode g("SVMClassifier", 1, {{"x", ml_floats({1, 2}, {1, 0})}}, {{"label", TensorProto::INT64}, {"scores", TensorProto::FLOAT}});
    g.ints("classlabels_ints", {0, 1, 2});
    binary_svc(g);
    expect_refused(g, "vectors_per_class has 2 entries, expected 3");
  }
  {
    MlNode g("SVMClassifier", 1, {{"x", ml_floats({1, 3}, {1, 0, 0})}}, {{"label", TensorProto::INT64}, {"scores", TensorProto::FLOAT}});
    classifier(g);
    binary_svc(g);
    expect_refused(g, "X has 3 features, the model 2");
  }
  {
    MlNode g("SVMClassifier", 1, {{"x", ml_floats({1, 2}, {1, 0})}}, {{"label", TensorProto::INT64}, {"scores", TensorProto::FLOAT}});
    classifier(g);
    binary_svc(g);
    g.str("kernel_type", "CUBIC");
    expect_refused(g, "kernel_type 'CUBIC'");
  }
  {
    MlNode g("SVMClassifier", 1, {{"x", ml_floats({1, 2}, {1, 0})}}, {{"label", TensorProto::INT64}, {"scores", TensorProto::FLOAT}});
    classifier(g);
    binary_svc(g);
    g.floats("kernel_params", {1, 2});
    expect_refused(g, "kernel_params has 2 entries, expected 3");
  }
  {
    MlNode g("SVMRegressor", 1, {{"x", ml_floats({1, 2}, {1, 0})}}, {{"y", TensorProto::FLOAT}});
    g.i("n_supports", 2).floats("support_vectors", {0, 0, 1, 1}).floats("coefficients", {1}).floats("rho", {0.1f});
    expect_refused(g, "coefficients has 1 entries, expected 2");
  }
  {
    MlNode g("SVMRegressor", 1, {{"x", ml_floats({1, 2}, {1, 0})}}, {{"y", TensorProto::FLOAT}});
    g.floats("coefficients", {1, 2});
    expect_refused(g, "rho is required");
  }
}

}  // namespace
}  // namespace loom
