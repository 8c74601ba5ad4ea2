// A scikit-learn-shaped pipeline of ai.onnx.ml ops on the reference EP:
// Imputer -> Scaler -> LinearClassifier and -> TreeEnsembleRegressor, with
// the batch dim symbolic, so the ops' inferred shapes meet the kernels'
// outputs inside one graph.
#include <cmath>
#include <limits>
#include <map>

#include "unit/reference/ml_test_util.h"

namespace loom {
namespace {

using ::onnx::TensorProto;
using testing::add_floats_attr;
using testing::add_int_attr;
using testing::add_ints_attr;
using testing::add_string_attr;
using testing::add_strings_attr;

TEST(MlPipelineTest, ImputerScalerClassifierAndTrees) {
  testing::ModelBuilder m(17);
  m.import_domain("ai.onnx.ml", 3);
  m.input("x", TensorProto::FLOAT, {-1, 3});
  m.output("label", TensorProto::INT64, {-1});
  m.output("scores", TensorProto::FLOAT, {-1, 3});
  m.output("value", TensorProto::FLOAT, {-1, 1});
  auto& imp = m.node("Imputer", {"x"}, {"filled"}, "imputer", "ai.onnx.ml");
  add_floats_attr(imp, "imputed_value_floats", {0, 5, 1});
  testing::add_float_attr(imp, "replaced_value_float", std::numeric_limits<float>::quiet_NaN());
  auto& sc = m.node("Scaler", {"filled"}, {"scaled"}, "scaler", "ai.onnx.ml");
  add_floats_attr(sc, "offset", {1, 2, 1});
  add_floats_attr(sc, "scale", {1, 0.5f, 2});
  auto& lc = m.node("LinearClassifier", {"scaled"}, {"label", "scores"}, "linear", "ai.onnx.ml");
  add_floats_attr(lc, "coefficients", {1, 0, 0, 0, 1, 0, 0, 0, 1});
  add_floats_attr(lc, "intercepts", {0, 0, 0});
  add_ints_attr(lc, "classlabels_ints", {10, 20, 30});
  // One tree: scaled x2 <= 0 ? 1 : 2, averaged over that one tree.
  auto& tr = m.node("TreeEnsembleRegressor", {"scaled"}, {"value"}, "trees", "ai.onnx.ml");
  add_ints_attr(tr, "nodes_treeids", {0, 0, 0});
  add_ints_attr(tr, "nodes_nodeids", {0, 1, 2});
  add_ints_attr(tr, "nodes_featureids", {2, 0, 0});
  add_strings_attr(tr, "nodes_modes", {"BRANCH_LEQ", "LEAF", "LEAF"});
  add_floats_attr(tr, "nodes_values", {0, 0, 0});
  add_ints_attr(tr, "nodes_truenodeids", {1, 0, 0});
  add_ints_attr(tr, "nodes_falsenodeids", {2, 0, 0});
  add_ints_attr(tr, "target_treeids", {0, 0});
  add_ints_attr(tr, "target_nodeids", {1, 2});
  add_ints_attr(tr, "target_ids", {0, 0});
  add_floats_attr(tr, "target_weights", {1, 2});
  add_int_attr(tr, "n_targets", 1);
  add_string_attr(tr, "aggregate_function", "AVERAGE");

  auto session = Session::create_from_bytes(testing::reference_env(), m.bytes());
  ASSERT_TRUE(session.has_value()) << session.status().message();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::map<std::string, Tensor> feeds;
  feeds.emplace("x", testing::ml_floats({2, 3}, {1, nan, 3, nan, 2, 0}));
  auto out = (*session)->run(feeds);
  ASSERT_TRUE(out.has_value()) << out.status().message();
  ASSERT_EQ(out->size(), 3u);
  // Filled [1, 5, 3], [0, 2, 0]; scaled [0, 1.5, 4], [-1, 0, -2].
  EXPECT_EQ(testing::int64_values_of((*out)[0]), (std::vector<int64_t>{30, 20}));
  testing::expect_floats_near((*out)[1], {2, 3}, {0, 1.5, 4, -1, 0, -2});
  testing::expect_floats_near((*out)[2], {2, 1}, {2, 1});
}

}  // namespace
}  // namespace loom
