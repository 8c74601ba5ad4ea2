// ai.onnx.ml TreeEnsembleRegressor and TreeEnsembleClassifier (1 and 3) on
// the reference EP: every node mode, NaN through
// nodes_missing_value_tracks_true, every aggregate function and post
// transform, base values, int64 / string labels, the binary case, the
// opset-3 double attributes, integer inputs, and near-miss models refused
// with a message naming the attribute. Expected values are worked out by
// hand in the comments.
#include <cmath>
#include <limits>
#include <memory>

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

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const float kNaNf = std::numeric_limits<float>::quiet_NaN();

// One tree: node 0 is x0 <= 0.5 (NaN goes true) ? leaf 1 (10) : node 2;
// node 2 is x1 <mode> 2 (NaN goes false) ? leaf 3 (20) : leaf 4 (30).
void mode_tree(MlNode& g, const std::string& mode) {
  g.ints("nodes_treeids", {0, 0, 0, 0, 0})
      .ints("nodes_nodeids", {0, 1, 2, 3, 4})
      .ints("nodes_featureids", {0, 0, 1, 0, 0})
      .strings("nodes_modes", {"BRANCH_LEQ", "LEAF", mode, "LEAF", "LEAF"})
      .floats("nodes_values", {0.5f, 0, 2, 0, 0})
      .ints("nodes_truenodeids", {1, 0, 3, 0, 0})
      .ints("nodes_falsenodeids", {2, 0, 4, 0, 0})
      .ints("nodes_missing_value_tracks_true", {1, 0, 0, 0, 0})
      .ints("target_treeids", {0, 0, 0})
      .ints("target_nodeids", {1, 3, 4})
      .ints("target_ids", {0, 0, 0})
      .floats("target_weights", {10, 20, 30})
      .i("n_targets", 1);
}

Tensor mode_rows() {
  return ml_floats({6, 2}, {1, 1, 1, 2, 1, 3, 0, 5, kNaNf, 1, 1, kNaNf});
}

TEST(MlTreeClassicTest, EveryNodeModeAndMissingValues) {
  // x1 = 1, 2, 3 against 2, then x0 <= 0.5 (10), x0 NaN (true: 10), x1 NaN
  // (false: 30).
  const std::vector<std::pair<std::string, std::vector<double>>> cases = {
      {"BRANCH_LEQ", {20, 20, 30, 10, 10, 30}}, {"BRANCH_LT", {20, 30, 30, 10, 10, 30}},
      {"BRANCH_GTE", {30, 20, 20, 10, 10, 30}}, {"BRANCH_GT", {30, 30, 20, 10, 10, 30}},
      {"BRANCH_EQ", {30, 20, 30, 10, 10, 30}},  {"BRANCH_NEQ", {20, 30, 20, 10, 10, 30}}};
  for (const auto& [mode, expected] : cases) {
    SCOPED_TRACE(mode);
    MlNode g("TreeEnsembleRegressor", 1, {{"x", mode_rows()}}, {{"y", TensorProto::FLOAT}});
    mode_tree(g, mode);
    auto out = run_ok(g);
    ASSERT_EQ(out.size(), 1u);
    expect_floats_near(out[0], {6, 1}, expected);
  }
}

// Two trees, two targets. Tree 0: x0 <= 0.5 ? {t0: 1, t1: 2} : {t0: 3};
// tree 1: x0 <= 1.5 ? {t0: 5, t1: -1} : {t0: -2}. Rows x0 = 0, 1, 2 reach
// (1,2)+(5,-1), (3,-)+(5,-1), (3,-)+(-2,-).
void two_trees(MlNode& g) {
  g.ints("nodes_treeids", {0, 0, 0, 1, 1, 1})
      .ints("nodes_nodeids", {0, 1, 2, 0, 1, 2})
      .ints("nodes_featureids", {0, 0, 0, 0, 0, 0})
      .strings("nodes_modes", {"BRANCH_LEQ", "LEAF", "LEAF", "BRANCH_LEQ", "LEAF", "LEAF"})
      .floats("nodes_values", {0.5f, 0, 0, 1.5f, 0, 0})
      .ints("nodes_truenodeids", {1, 0, 0, 1, 0, 0})
      .ints("nodes_falsenodeids", {2, 0, 0, 2, 0, 0})
      .ints("target_treeids", {0, 0, 0, 1, 1, 1})
      .ints("target_nodeids", {1, 1, 2, 1, 1, 2})
      .ints("target_ids", {0, 1, 0, 0, 1, 0})
      .floats("target_weights", {1, 2, 3, 5, -1, -2})
      .i("n_targets", 2);
}

TEST(MlTreeClassicTest, RegressorAggregatesBaseValuesAndTransforms) {
  struct Case {
    std::string aggregate, post;
    std::vector<float> base;
    std::vector<double> expected;
  };
  const std::vector<double> sum = {6, 1, 8, -1, 1, 0};
  std::vector<double> logistic_sum, softmax_sum;
  for (double v : sum) logistic_sum.push_back(ml_logistic(v));
  for (size_t r = 0; r < 3; ++r)
    for (double v : ml_softmax({sum[2 * r], sum[2 * r + 1]})) softmax_sum.push_back(v);
  const std::vector<Case> cases = {
      {"SUM", "NONE", {}, sum},
      {"AVERAGE", "NONE", {}, {3, 0.5, 4, -0.5, 0.5, 0}},
      {"MIN", "NONE", {}, {1, -1, 3, -1, -2, 0}},  // a target no leaf voted for stays 0
      {"MAX", "NONE", {}, {5, 2, 5, -1, 3, 0}},
      {"SUM", "NONE", {10, 20}, {16, 21, 18, 19, 11, 20}},
      {"AVERAGE", "NONE", {10, 20}, {13, 20.5, 14, 19.5, 10.5, 20}},  // averaged, then the base added
      {"SUM", "NONE", {1}, {7, 2, 9, 0, 2, 1}},                       // one base value for every target
      {"SUM", "LOGISTIC", {}, logistic_sum},
      {"SUM", "SOFTMAX", {}, softmax_sum},
      // SOFTMAX_ZERO: the last row's 0 stays 0.
      {"SUM", "SOFTMAX_ZERO", {}, {softmax_sum[0], softmax_sum[1], softmax_sum[2], softmax_sum[3], 1, 0}},
      // PROBIT of the averages: only 0.5 (-> 0) and 0 (-> 0, the erf-inverse
      // approximation's edge) are in range, the rest are NaN.
      {"AVERAGE", "PROBIT", {}, {kNaN, 0, kNaN, kNaN, 0, 0}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.aggregate + " " + c.post);
    MlNode g("TreeEnsembleRegressor", 1, {{"x", ml_floats({3, 1}, {0, 1, 2})}}, {{"y", TensorProto::FLOAT}});
    two_trees(g);
    g.str("aggregate_function", c.aggregate).str("post_transform", c.post);
    if (!c.base.empty()) g.floats("base_values", c.base);
    auto out = run_ok(g);
    ASSERT_EQ(out.size(), 1u);
    expect_floats_near(out[0], {3, 2}, c.expected);
  }
}

TEST(MlTreeClassicTest, RegressorTakesIntegerAndDoubleInputsAndOneDimensionalX) {
  MlNode i64("TreeEnsembleRegressor", 1, {{"x", testing::ml_int64s({3, 1}, {0, 1, 2})}}, {{"y", TensorProto::FLOAT}});
  two_trees(i64);
  expect_floats_near(run_ok(i64).at(0), {3, 2}, {6, 1, 8, -1, 1, 0});
  MlNode i32("TreeEnsembleRegressor", 1, {{"x", testing::ml_int32s({3, 1}, {0, 1, 2})}}, {{"y", TensorProto::FLOAT}});
  two_trees(i32);
  expect_floats_near(run_ok(i32).at(0), {3, 2}, {6, 1, 8, -1, 1, 0});
  MlNode dbl("TreeEnsembleRegressor", 1, {{"x", testing::ml_doubles({1}, {2})}}, {{"y", TensorProto::FLOAT}});
  two_trees(dbl);
  expect_floats_near(run_ok(dbl).at(0), {1, 2}, {1, 0});
}

TEST(MlTreeClassicTest, OpsetThreeUsesTheDoubleTensors) {
  // 0.1000000010 lies between 0.1 (double) and 0.1f (0.10000000149): the
  // double threshold sends it right, a float one would send it left.
  auto build = [](MlNode& g, bool as_tensor) {
    g.ints("nodes_treeids", {0, 0, 0})
        .ints("nodes_nodeids", {0, 1, 2})
        .ints("nodes_featureids", {0, 0, 0})
        .strings("nodes_modes", {"BRANCH_LEQ", "LEAF", "LEAF"})
        .ints("nodes_truenodeids", {1, 0, 0})
        .ints("nodes_falsenodeids", {2, 0, 0})
        .ints("target_treeids", {0, 0})
        .ints("target_nodeids", {1, 2})
        .ints("target_ids", {0, 0})
        .i("n_targets", 1);
    if (as_tensor) g.doubles("nodes_values_as_tensor", {0.1, 0, 0}).doubles("target_weights_as_tensor", {1.5, 2.5}).doubles("base_values_as_tensor", {0.25});
    else g.floats("nodes_values", {0.1f, 0, 0}).floats("target_weights", {1.5f, 2.5f}).floats("base_values", {0.25f});
  };
  MlNode d("TreeEnsembleRegressor", 3, {{"x", testing::ml_doubles({2, 1}, {0.1000000010, 0.05})}}, {{"y", TensorProto::FLOAT}});
  build(d, true);
  expect_floats_near(run_ok(d).at(0), {2, 1}, {2.75, 1.75});
  MlNode f("TreeEnsembleRegressor", 3, {{"x", testing::ml_doubles({2, 1}, {0.1000000010, 0.05})}}, {{"y", TensorProto::FLOAT}});
  build(f, false);
  expect_floats_near(run_ok(f).at(0), {2, 1}, {1.75, 1.75});
}

// Three classes. Tree 0: x0 <= 0.5 ? {c0: 2, c1: 1} : {c2: 3}; tree 1 is one
// leaf {c1: 0.5}. Rows x0 = 0, 1 score [2, 1.5, 0] and [0, 0.5, 3].
void three_classes(MlNode& g) {
  g.ints("nodes_treeids", {0, 0, 0, 1})
      .ints("nodes_nodeids", {0, 1, 2, 0})
      .ints("nodes_featureids", {0, 0, 0, 0})
      .strings("nodes_modes", {"BRANCH_LEQ", "LEAF", "LEAF", "LEAF"})
      .floats("nodes_values", {0.5f, 0, 0, 0})
      .ints("nodes_truenodeids", {1, 0, 0, 0})
      .ints("nodes_falsenodeids", {2, 0, 0, 0})
      .ints("class_treeids", {0, 0, 0, 1})
      .ints("class_nodeids", {1, 1, 2, 0})
      .ints("class_ids", {0, 1, 2, 1})
      .floats("class_weights", {2, 1, 3, 0.5f});
}

TEST(MlTreeClassicTest, MulticlassEveryPostTransformAndLabelKind) {
  const std::vector<double> raw = {2, 1.5, 0, 0, 0.5, 3};
  std::vector<double> logistic, softmax;
  for (double v : raw) logistic.push_back(ml_logistic(v));
  for (double v : ml_softmax({2, 1.5, 0})) softmax.push_back(v);
  for (double v : ml_softmax({0, 0.5, 3})) softmax.push_back(v);
  // SOFTMAX_ZERO keeps a zero score at zero: [2, 1.5, 0] -> [1, e^-0.5, 0]
  // / (1 + e^-0.5); [0, 0.5, 3] -> [0, e^-2.5, 1] / (1 + e^-2.5).
  const double a = std::exp(-0.5), b = std::exp(-2.5);
  const std::vector<double> softmax_zero = {1 / (1 + a), a / (1 + a), 0, 0, b / (1 + b), 1 / (1 + b)};
  const std::vector<std::pair<std::string, std::vector<double>>> cases = {
      {"NONE", raw}, {"LOGISTIC", logistic}, {"SOFTMAX", softmax}, {"SOFTMAX_ZERO", softmax_zero}};
  for (const auto& [post, expected] : cases) {
    SCOPED_TRACE(post);
    MlNode g("TreeEnsembleClassifier", 1, {{"x", ml_floats({2, 1}, {0, 1})}},
             {{"label", TensorProto::INT64}, {"scores", TensorProto::FLOAT}});
    three_classes(g);
    g.ints("classlabels_int64s", {7, 8, 9}).str("post_transform", post);
    auto out = run_ok(g);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(testing::int64_values_of(out[0]), (std::vector<int64_t>{7, 9}));
    expect_floats_near(out[1], {2, 3}, expected);
  }
  // String labels and base values: [2.1, 1.7, 0.3] and [0.1, 0.7, 3.3].
  MlNode s("TreeEnsembleClassifier", 1, {{"x", ml_floats({2, 1}, {0, 1})}},
           {{"label", TensorProto::STRING}, {"scores", TensorProto::FLOAT}});
  three_classes(s);
  s.strings("classlabels_strings", {"cat", "dog", "eel"}).floats("base_values", {0.1f, 0.2f, 0.3f});
  auto out = run_ok(s);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].strings(), (std::vector<std::string>{"cat", "eel"}));
  expect_floats_near(out[1], {2, 3}, {2.1, 1.7, 0.3, 0.1, 0.7, 3.3});
}

// Binary: x0 <= 0.5 ? w_left : w_right, every vote for class 0.
void binary_tree(MlNode& g, float left, float right) {
  g.ints("nodes_treeids", {0, 0, 0})
      .ints("nodes_nodeids", {0, 1, 2})
      .ints("nodes_featureids", {0, 0, 0})
      .strings("nodes_modes", {"BRANCH_LEQ", "LEAF", "LEAF"})
      .floats("nodes_values", {0.5f, 0, 0})
      .ints("nodes_truenodeids", {1, 0, 0})
      .ints("nodes_falsenodeids", {2, 0, 0})
      .ints("class_treeids", {0, 0})
      .ints("class_nodeids", {1, 2})
      .ints("class_ids", {0, 0})
      .floats("class_weights", {left, right});
}

TEST(MlTreeClassicTest, BinaryClassifierDerivesTheOtherClass) {
  // Probability-like weights (>= 0), NONE: [1 - s, s]; PROBIT: probit of
  // both (probit(0.7) = -probit(0.3) = 0.5244, probit(0.8) = 0.8416).
  struct Case {
    std::string post;
    float left, right, base;
    std::vector<int64_t> labels;
    std::vector<double> scores;
    double tol;
  };
  const double l12 = ml_logistic(1.2), l07 = ml_logistic(0.7);
  const std::vector<double> sm_a = ml_softmax({1.2, -1.2}), sm_b = ml_softmax({-0.7, 0.7});
  const std::vector<Case> cases = {
      {"NONE", 0.3f, 0.8f, 0, {0, 1}, {0.7, 0.3, 0.2, 0.8}, 1e-6},
      {"PROBIT", 0.3f, 0.8f, 0, {0, 1}, {0.5244, -0.5244, -0.8416, 0.8416}, 2e-3},
      // Mixed-sign weights are margins: NONE gives [-s, s].
      {"NONE", -1.2f, 0.7f, 0, {0, 1}, {1.2, -1.2, -0.7, 0.7}, 1e-6},
      {"LOGISTIC", -1.2f, 0.7f, 0, {0, 1}, {l12, 1 - l12, 1 - l07, l07}, 1e-6},
      {"SOFTMAX", -1.2f, 0.7f, 0, {0, 1}, {sm_a[0], sm_a[1], sm_b[0], sm_b[1]}, 1e-6},
      {"SOFTMAX_ZERO", -1.2f, 0.7f, 0, {0, 1}, {sm_a[0], sm_a[1], sm_b[0], sm_b[1]}, 1e-6},
      // XGBoost's form: a base score added before the logistic: s = -0.7, 1.2.
      {"LOGISTIC", -1.2f, 0.7f, 0.5f, {0, 1}, {l07, 1 - l07, 1 - l12, l12}, 1e-6},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.post + " " + std::to_string(c.left));
    MlNode g("TreeEnsembleClassifier", 1, {{"x", ml_floats({2, 1}, {0, 1})}},
             {{"label", TensorProto::INT64}, {"scores", TensorProto::FLOAT}});
    binary_tree(g, c.left, c.right);
    g.ints("classlabels_int64s", {0, 1}).str("post_transform", c.post);
    if (c.base != 0) g.floats("base_values", {c.base});
    auto out = run_ok(g);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(testing::int64_values_of(out[0]), c.labels);
    expect_floats_near(out[1], {2, 2}, c.scores, c.tol);
  }
  // Every vote for class 1 instead: the same scores (ONNX Runtime).
  MlNode one("TreeEnsembleClassifier", 1, {{"x", ml_floats({2, 1}, {0, 1})}},
             {{"label", TensorProto::INT64}, {"scores", TensorProto::FLOAT}});
  binary_tree(one, 0.3f, 0.8f);
  one.attr_named("class_ids").set_ints(0, 1);
  one.attr_named("class_ids").set_ints(1, 1);
  one.ints("classlabels_int64s", {0, 1});
  auto ones = run_ok(one);
  ASSERT_EQ(ones.size(), 2u);
  EXPECT_EQ(testing::int64_values_of(ones[0]), (std::vector<int64_t>{0, 1}));
  expect_floats_near(ones[1], {2, 2}, {0.7, 0.3, 0.2, 0.8});
  MlNode s("TreeEnsembleClassifier", 3, {{"x", testing::ml_int64s({2, 1}, {1, 0})}},
           {{"label", TensorProto::STRING}, {"scores", TensorProto::FLOAT}});
  binary_tree(s, 0.3f, 0.8f);
  s.strings("classlabels_strings", {"no", "yes"});
  auto out = run_ok(s);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].strings(), (std::vector<std::string>{"yes", "no"}));
  expect_floats_near(out[1], {2, 2}, {0.2, 0.8, 0.7, 0.3});
}

TEST(MlTreeClassicTest, NearMissModelsAreRefused) {
  auto regressor = [] {
    return std::make_unique<MlNode>("TreeEnsembleRegressor", 1,
                                    std::vector<std::pair<std::string, Tensor>>{{"x", mode_rows()}},
                                    std::vector<std::pair<std::string, int32_t>>{{"y", TensorProto::FLOAT}});
  };
  {
    auto g = regressor();
    mode_tree(*g, "BRANCH_SOMETIMES");
    expect_refused(*g, "node mode 'BRANCH_SOMETIMES'");
  }
  {  // one feature id short
    auto g = regressor();
    g->ints("nodes_treeids", {0, 0, 0}).ints("nodes_nodeids", {0, 1, 2}).ints("nodes_featureids", {0, 0})
        .strings("nodes_modes", {"BRANCH_LEQ", "LEAF", "LEAF"}).floats("nodes_values", {0, 0, 0})
        .ints("nodes_truenodeids", {1, 0, 0}).ints("nodes_falsenodeids", {2, 0, 0}).i("n_targets", 1);
    expect_refused(*g, "nodes_featureids has 2 entries, expected 3");
  }
  {  // a child id the tree lacks
    auto g = regressor();
    g->ints("nodes_treeids", {0, 0, 0}).ints("nodes_nodeids", {0, 1, 2}).ints("nodes_featureids", {0, 0, 0})
        .strings("nodes_modes", {"BRANCH_LEQ", "LEAF", "LEAF"}).floats("nodes_values", {0, 0, 0})
        .ints("nodes_truenodeids", {7, 0, 0}).ints("nodes_falsenodeids", {2, 0, 0}).i("n_targets", 1);
    expect_refused(*g, "nodes_truenodeids names node 7");
  }
  {  // node 1 branches back to node 0: a cycle
    auto g = regressor();
    g->ints("nodes_treeids", {0, 0, 0}).ints("nodes_nodeids", {0, 1, 2}).ints("nodes_featureids", {0, 0, 0})
        .strings("nodes_modes", {"BRANCH_LEQ", "BRANCH_LEQ", "LEAF"}).floats("nodes_values", {0, 0, 0})
        .ints("nodes_truenodeids", {1, 0, 0}).ints("nodes_falsenodeids", {2, 2, 0}).i("n_targets", 1);
    expect_refused(*g, "cycle");
  }
  {  // the same node id twice in one tree
    auto g = regressor();
    g->ints("nodes_treeids", {0, 0}).ints("nodes_nodeids", {0, 0}).ints("nodes_featureids", {0, 0})
        .strings("nodes_modes", {"LEAF", "LEAF"}).floats("nodes_values", {0, 0})
        .ints("nodes_truenodeids", {0, 0}).ints("nodes_falsenodeids", {0, 0}).i("n_targets", 1);
    expect_refused(*g, "appears twice in tree 0");
  }
  {  // a target id past n_targets
    auto g = regressor();
    mode_tree(*g, "BRANCH_LT");
    g->attr_named("target_ids").set_ints(2, 1);  // target_ids {0, 0, 1} with n_targets 1
    expect_refused(*g, "out of range [0, 1)");
  }
  {  // a feature X does not have
    MlNode g("TreeEnsembleRegressor", 1, {{"x", ml_floats({1, 1}, {0})}}, {{"y", TensorProto::FLOAT}});
    mode_tree(g, "BRANCH_LT");
    expect_refused(g, "reads feature 1 but X has 1 features");
  }
  {  // a target count that would ask for gigabytes per row
    auto g = regressor();
    mode_tree(*g, "BRANCH_LT");
    g->attr_named("n_targets").set_i(int64_t{1} << 40);
    expect_refused(*g, "n_targets must be in [1, 16777216]");
  }
  {
    auto g = regressor();
    mode_tree(*g, "BRANCH_LT");
    g->str("aggregate_function", "MEDIAN");
    expect_refused(*g, "aggregate_function 'MEDIAN'");
  }
  {
    auto g = regressor();
    mode_tree(*g, "BRANCH_LT");
    g->str("post_transform", "EXP");
    expect_refused(*g, "post_transform 'EXP'");
  }
  {
    MlNode g("TreeEnsembleRegressor", 1, {{"x", ml_floats({3, 1}, {0, 1, 2})}}, {{"y", TensorProto::FLOAT}});
    two_trees(g);
    g.floats("base_values", {1, 2, 3});
    expect_refused(g, "base_values has 3 entries, expected 2");
  }
  {
    MlNode g("TreeEnsembleRegressor", 3, {{"x", ml_floats({3, 1}, {0, 1, 2})}}, {{"y", TensorProto::FLOAT}});
    two_trees(g);
    g.doubles("nodes_values_as_tensor", {0.5, 0, 0, 1.5, 0, 0});
    expect_refused(g, "nodes_values and nodes_values_as_tensor are both set");
  }
  {
    MlNode g("TreeEnsembleRegressor", 1, {{"x", ml_floats({1, 1, 2}, {0, 1})}}, {{"y", TensorProto::FLOAT}});
    mode_tree(g, "BRANCH_LT");
    expect_refused(g, "X must be 1-D or 2-D");
  }
  {  // a class id past the labels
    MlNode g("TreeEnsembleClassifier", 1, {{"x", ml_floats({2, 1}, {0, 1})}},
             {{"label", TensorProto::INT64}, {"scores", TensorProto::FLOAT}});
    three_classes(g);
    g.ints("classlabels_int64s", {7, 8});
    expect_refused(g, "target / class 2, out of range [0, 2)");
  }
  {  // no labels
    MlNode g("TreeEnsembleClassifier", 1, {{"x", ml_floats({2, 1}, {0, 1})}},
             {{"label", TensorProto::INT64}, {"scores", TensorProto::FLOAT}});
    three_classes(g);
    expect_refused(g, "needs at least two class labels");
  }
  {  // a vote on a branch node
    MlNode g("TreeEnsembleClassifier", 1, {{"x", ml_floats({2, 1}, {0, 1})}},
             {{"label", TensorProto::INT64}, {"scores", TensorProto::FLOAT}});
    binary_tree(g, 0.1f, 0.2f);
    g.attr_named("class_nodeids").set_ints(1, 0);
    g.ints("classlabels_int64s", {0, 1});
    expect_refused(g, "node index 0 is a branch but holds leaf weights");
  }
  {
    MlNode g("TreeEnsembleClassifier", 1, {{"x", ml_floats({2, 1}, {0, 1})}},
             {{"label", TensorProto::INT64}, {"scores", TensorProto::FLOAT}});
    binary_tree(g, 0.1f, 0.2f);
    g.attr_named("nodes_featureids").set_ints(0, -3);
    g.ints("classlabels_int64s", {0, 1});
    expect_refused(g, "negative feature id -3");
  }
  {
    MlNode g("TreeEnsembleClassifier", 1, {{"x", ml_floats({2, 1}, {0, 1})}},
             {{"label", TensorProto::INT64}, {"scores", TensorProto::FLOAT}});
    binary_tree(g, 0.1f, 0.2f);
    g.attr_named("class_weights").mutable_floats()->RemoveLast();
    g.ints("classlabels_int64s", {0, 1});
    expect_refused(g, "class_weights has 1 entries, expected 2");
  }
  {
    MlNode g("TreeEnsembleClassifier", 1, {{"x", ml_floats({2, 1}, {0, 1})}},
             {{"label", TensorProto::INT64}, {"scores", TensorProto::FLOAT}});
    binary_tree(g, 0.1f, 0.2f);
    g.ints("classlabels_int64s", {0, 1}).strings("classlabels_strings", {"a", "b"});
    expect_refused(g, "classlabels_int64s and classlabels_strings are both set");
  }
  {  // a vote for a node that is not there
    MlNode g("TreeEnsembleClassifier", 1, {{"x", ml_floats({2, 1}, {0, 1})}},
             {{"label", TensorProto::INT64}, {"scores", TensorProto::FLOAT}});
    binary_tree(g, 0.1f, 0.2f);
    g.attr_named("class_nodeids").set_ints(1, 9);
    g.ints("classlabels_int64s", {0, 1});
    expect_refused(g, "class_nodeids names node 9");
  }
}

}  // namespace
}  // namespace loom
