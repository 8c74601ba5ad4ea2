// ai.onnx.ml LinearClassifier and LinearRegressor on the reference EP:
// every post transform, int64 / string labels, the binary case (one row of
// coefficients, two labels: scores [-s, s]), integer inputs, and
// coefficient / intercept / label counts that do not fit refused.
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
using testing::ml_softmax;
using testing::run_ok;

// Three classes over two features: scores x0, x1 + 0.5, x0 + x1 - 1.
// Rows [1, 2], [3, -1], [0, -0.5] score [1, 2.5, 2], [3, -0.5, 1] and
// [0, 0, -1.5].
void three_class_model(MlNode& g) {
  g.floats("coefficients", {1, 0, 0, 1, 1, 1}).floats("intercepts", {0, 0.5f, -1}).ints("classlabels_ints", {10, 20, 30});
}

TEST(MlLinearTest, ClassifierEveryPostTransform) {
  const std::vector<double> raw = {1, 2.5, 2, 3, -0.5, 1, 0, 0, -1.5};
  std::vector<double> logistic, softmax;
  for (double v : raw) logistic.push_back(ml_logistic(v));
  for (size_t r = 0; r < 3; ++r)
    for (double v : ml_softmax({raw[3 * r], raw[3 * r + 1], raw[3 * r + 2]})) softmax.push_back(v);
  // SOFTMAX_ZERO leaves the two zero scores of the last row at 0.
  std::vector<double> softmax_zero(softmax.begin(), softmax.begin() + 6);
  for (double v : {0.0, 0.0, 1.0}) softmax_zero.push_back(v);
  const std::vector<std::pair<std::string, std::vector<double>>> cases = {
      {"NONE", raw}, {"LOGISTIC", logistic}, {"SOFTMAX", softmax}, {"SOFTMAX_ZERO", softmax_zero}};
  for (const auto& [post, expected] : cases) {
    SCOPED_TRACE(post);
    MlNode g("LinearClassifier", 1, {{"x", ml_floats({3, 2}, {1, 2, 3, -1, 0, -0.5f})}},
             {{"label", TensorProto::INT64}, {"scores", TensorProto::FLOAT}});
    three_class_model(g);
    g.str("post_transform", post);
    auto out = run_ok(g);
    ASSERT_EQ(out.size(), 2u);
    // The label follows the transformed scores: SOFTMAX_ZERO's [0, 0, 1]
    // picks the third class.
    const int64_t last = post == "SOFTMAX_ZERO" ? 30 : 10;
    EXPECT_EQ(testing::int64_values_of(out[0]), (std::vector<int64_t>{20, 10, last}));
    expect_floats_near(out[1], {3, 3}, expected);
  }
  // PROBIT on scores in (0, 1): [0.3, 0.4] -> [-0.5244, -0.2533].
  MlNode p("LinearClassifier", 1, {{"x", ml_floats({1, 2}, {1, 1})}},
           {{"label", TensorProto::STRING}, {"scores", TensorProto::FLOAT}});
  p.floats("coefficients", {0.1f, 0, 0, 0.1f}).floats("intercepts", {0.2f, 0.3f}).strings("classlabels_strings", {"a", "b"});
  p.str("post_transform", "PROBIT");
  auto out = run_ok(p);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].strings(), (std::vector<std::string>{"b"}));
  expect_floats_near(out[1], {1, 2}, {-0.5244, -0.2533}, 2e-3);
}

TEST(MlLinearTest, BinaryClassifierScoresBothClasses) {
  // s = x0 - x1 + 0.5: rows [2, 1] and [0, 3] give 1.5 and -2.5.
  const std::vector<std::pair<std::string, std::vector<double>>> cases = {
      {"NONE", {-1.5, 1.5, 2.5, -2.5}},
      {"LOGISTIC", {ml_logistic(-1.5), ml_logistic(1.5), ml_logistic(2.5), ml_logistic(-2.5)}}};
  for (const auto& [post, expected] : cases) {
    SCOPED_TRACE(post);
    MlNode g("LinearClassifier", 1, {{"x", testing::ml_int64s({2, 2}, {2, 1, 0, 3})}},
             {{"label", TensorProto::STRING}, {"scores", TensorProto::FLOAT}});
    g.floats("coefficients", {1, -1}).floats("intercepts", {0.5f}).strings("classlabels_strings", {"no", "yes"});
    g.str("post_transform", post);
    auto out = run_ok(g);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].strings(), (std::vector<std::string>{"yes", "no"}));
    expect_floats_near(out[1], {2, 2}, expected);
  }
}

TEST(MlLinearTest, RegressorTargetsAndInputTypes) {
  // Targets x0 + 2 x1 + 0.5 and 3 x0 + 4 x1 - 0.5.
  MlNode g("LinearRegressor", 1, {{"x", ml_floats({2, 2}, {1, 1, 0, -1})}}, {{"y", TensorProto::FLOAT}});
  g.floats("coefficients", {1, 2, 3, 4}).floats("intercepts", {0.5f, -0.5f}).i("targets", 2);
  expect_floats_near(run_ok(g).at(0), {2, 2}, {3.5, 6.5, -1.5, -4.5});
  MlNode one("LinearRegressor", 1, {{"x", testing::ml_int32s({1, 2}, {3, 1})}}, {{"y", TensorProto::FLOAT}});
  one.floats("coefficients", {2, -1}).floats("intercepts", {1});
  expect_floats_near(run_ok(one).at(0), {1, 1}, {6});
  MlNode d("LinearRegressor", 1, {{"x", testing::ml_doubles({2}, {3, 1})}}, {{"y", TensorProto::FLOAT}});
  d.floats("coefficients", {2, -1}).str("post_transform", "LOGISTIC");
  expect_floats_near(run_ok(d).at(0), {1, 1}, {ml_logistic(5)});
}

TEST(MlLinearTest, NearMissModelsAreRefused) {
  {
    MlNode g("LinearClassifier", 1, {{"x", ml_floats({1, 2}, {1, 2})}},
             {{"label", TensorProto::INT64}, {"scores", TensorProto::FLOAT}});
    g.floats("coefficients", {1, 2, 3, 4, 5}).ints("classlabels_ints", {0, 1});
    expect_refused(g, "5 coefficients do not split into rows of 2 features");
  }
  {
    MlNode g("LinearClassifier", 1, {{"x", ml_floats({1, 2}, {1, 2})}},
             {{"label", TensorProto::INT64}, {"scores", TensorProto::FLOAT}});
    g.floats("coefficients", {1, 0, 0, 1, 1, 1}).ints("classlabels_ints", {0, 1});
    expect_refused(g, "3 rows of coefficients for 2 class labels");
  }
  {
    MlNode g("LinearClassifier", 1, {{"x", ml_floats({1, 2}, {1, 2})}},
             {{"label", TensorProto::INT64}, {"scores", TensorProto::FLOAT}});
    g.floats("coefficients", {1, 0, 0, 1}).floats("intercepts", {1, 2, 3}).ints("classlabels_ints", {0, 1});
    expect_refused(g, "intercepts has 3 entries, expected 2");
  }
  {
    MlNode g("LinearClassifier", 1, {{"x", ml_floats({1, 2}, {1, 2})}},
             {{"label", TensorProto::INT64}, {"scores", TensorProto::FLOAT}});
    g.floats("coefficients", {1, 0, 0, 1}).ints("classlabels_ints", {0, 1}).str("post_transform", "SQUASH");
    expect_refused(g, "post_transform 'SQUASH'");
  }
  {
    MlNode g("LinearRegressor", 1, {{"x", ml_floats({1, 2}, {1, 2})}}, {{"y", TensorProto::FLOAT}});
    g.floats("coefficients", {1, 2, 3, 4}).i("targets", 3);
    expect_refused(g, "4 coefficients for 3 targets of 2 features");
  }
  {
    MlNode g("LinearRegressor", 1, {{"x", ml_floats({1, 1, 2}, {1, 2})}}, {{"y", TensorProto::FLOAT}});
    g.floats("coefficients", {1, 2});
    expect_refused(g, "X must be 1-D or 2-D");
  }
}

}  // namespace
}  // namespace loom
