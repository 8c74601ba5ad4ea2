// ai.onnx.ml kernels on the reference EP: Binarizer, ArrayFeatureExtractor,
// LabelEncoder (opset 2 lists, opset 1 both ways) and TreeEnsemble-5, with
// out-of-range indices, inconsistent lists and cyclic trees refused.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "unit/reference/one_node_model.h"

namespace loom {
namespace {

using ::onnx::TensorProto;
using testing::float_tensor;
using testing::OneNodeModel;
using testing::values_of;

// Moves the node into ai.onnx.ml, imported at `opset`.
void in_ml_domain(OneNodeModel& g, int64_t opset) {
  g.node->set_domain("ai.onnx.ml");
  g.m.import_domain("ai.onnx.ml", opset);
}

Tensor int64s(Dims dims, std::vector<int64_t> v) { return Tensor::from_vector(DType::kInt64, std::move(dims), v); }

TEST(MlTest, BinarizerAndArrayFeatureExtractor) {
  OneNodeModel b("Binarizer", 17, {{"x", float_tensor({4}, {-1, 0.5f, 1, 2})}}, {{"y", TensorProto::FLOAT}});
  in_ml_domain(b, 1);
  b.attr("threshold", 0.5f);
  auto out = b.run();
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ(values_of((*out)[0]), (std::vector<float>{0, 0, 1, 1}));

  OneNodeModel a("ArrayFeatureExtractor", 17, {{"x", float_tensor({2, 3}, {1, 2, 3, 4, 5, 6})}, {"i", int64s({2}, {2, 0})}},
                 {{"y", TensorProto::FLOAT}});
  in_ml_domain(a, 1);
  auto picked = a.run();
  ASSERT_TRUE(picked.has_value()) << picked.status().message();
  EXPECT_EQ((*picked)[0].dims(), (Dims{2, 2}));
  EXPECT_EQ(values_of((*picked)[0]), (std::vector<float>{3, 1, 6, 4}));

  OneNodeModel bad("ArrayFeatureExtractor", 17, {{"x", float_tensor({2, 3}, {1, 2, 3, 4, 5, 6})}, {"i", int64s({1}, {3})}},
                   {{"y", TensorProto::FLOAT}});
  in_ml_domain(bad, 1);
  auto refused = bad.run();
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.status().message().find("out of range"), std::string::npos) << refused.status().message();
}

TEST(MlTest, LabelEncoderMapsKeysAndFallsBackToTheDefault) {
  OneNodeModel g("LabelEncoder", 17, {{"x", Tensor::from_strings({3}, {"b", "z", "a"})}}, {{"y", TensorProto::INT64}});
  in_ml_domain(g, 2);
  testing::add_strings_attr(*g.node, "keys_strings", {"a", "b"});
  g.attr("values_int64s", std::vector<int64_t>{10, 20}).attr("default_int64", int64_t{7});
  auto out = g.run();
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ(testing::int64_values_of((*out)[0]), (std::vector<int64_t>{20, 7, 10}));

  OneNodeModel uneven("LabelEncoder", 17, {{"x", Tensor::from_strings({1}, {"a"})}}, {{"y", TensorProto::INT64}});
  in_ml_domain(uneven, 2);
  testing::add_strings_attr(*uneven.node, "keys_strings", {"a", "b"});
  uneven.attr("values_int64s", std::vector<int64_t>{10});
  auto refused = uneven.run();
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.status().message().find("2 keys for 1 values"), std::string::npos) << refused.status().message();
}

TEST(MlTest, LegacyLabelEncoderMapsBothWays) {
  OneNodeModel to_index("LabelEncoder", 17, {{"x", Tensor::from_strings({2}, {"y", "q"})}}, {{"y", TensorProto::INT64}});
  in_ml_domain(to_index, 1);
  testing::add_strings_attr(*to_index.node, "classes_strings", {"x", "y"});
  auto out = to_index.run();
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ(testing::int64_values_of((*out)[0]), (std::vector<int64_t>{1, -1}));

  OneNodeModel to_string("LabelEncoder", 17, {{"x", int64s({2}, {0, 5})}}, {{"y", TensorProto::STRING}});
  in_ml_domain(to_string, 1);
  testing::add_strings_attr(*to_string.node, "classes_strings", {"x", "y"});
  auto back = to_string.run();
  ASSERT_TRUE(back.has_value()) << back.status().message();
  EXPECT_EQ((*back)[0].strings(), (std::vector<std::string>{"x", "_Unused"}));
}

void add_float_tensor_attr(::onnx::NodeProto& n, const std::string& name, const std::vector<float>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(TensorProto::FLOAT);
  a->mutable_t()->add_dims(static_cast<int64_t>(v.size()));
  for (float f : v) a->mutable_t()->add_float_data(f);
}

void add_uint8_tensor_attr(::onnx::NodeProto& n, const std::string& name, const std::vector<int32_t>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(TensorProto::UINT8);
  a->mutable_t()->add_dims(static_cast<int64_t>(v.size()));
  for (int32_t i : v) a->mutable_t()->add_int32_data(i);
}

// One tree: node 0 sends x[0] <= 2 to leaf 0 (weight 10, target 0), else
// to node 1, which sends x[0] in {5, 7} to leaf 1 (weight 20, target 1),
// else to leaf 2 (weight 30, target 1). `false_of_1` replaces node 1's
// false branch (a node id when `false_leaf_1` is 0).
void build_tree(OneNodeModel& g, int64_t false_of_1 = 2, int64_t false_leaf_1 = 1) {
  in_ml_domain(g, 5);
  add_float_tensor_attr(*g.node, "nodes_splits", {2, 0});
  add_uint8_tensor_attr(*g.node, "nodes_modes", {0, 6});
  add_float_tensor_attr(*g.node, "membership_values", {5, 7, NAN});
  g.attr("nodes_featureids", std::vector<int64_t>{0, 0});
  g.attr("nodes_truenodeids", std::vector<int64_t>{0, 1});
  g.attr("nodes_trueleafs", std::vector<int64_t>{1, 1});
  g.attr("nodes_falsenodeids", std::vector<int64_t>{1, false_of_1});
  g.attr("nodes_falseleafs", std::vector<int64_t>{0, false_leaf_1});
  g.attr("leaf_targetids", std::vector<int64_t>{0, 1, 1});
  add_float_tensor_attr(*g.node, "leaf_weights", {10, 20, 30});
  g.attr("tree_roots", std::vector<int64_t>{0}).attr("n_targets", int64_t{2});
}

TEST(MlTest, TreeEnsembleWalksComparisonsAndSets) {
  OneNodeModel g("TreeEnsemble", 17, {{"x", float_tensor({3, 1}, {1, 7, 6})}}, {{"y", TensorProto::FLOAT}});
  build_tree(g);
  auto out = g.run();
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ((*out)[0].dims(), (Dims{3, 2}));
  EXPECT_EQ(values_of((*out)[0]), (std::vector<float>{10, 0, 0, 20, 0, 30}));
}

// MIN and MAX leave a target no leaf reached at 0 (as ONNX Runtime and the
// v1/v3 ensembles do), and PROBIT is a post transform like the others.
TEST(MlTest, TreeEnsembleMinMaxAndProbit) {
  for (int64_t aggregate : {int64_t{2}, int64_t{3}}) {
    OneNodeModel g("TreeEnsemble", 17, {{"x", float_tensor({2, 1}, {1, 7})}}, {{"y", TensorProto::FLOAT}});
    build_tree(g);
    g.attr("aggregate_function", aggregate);
    auto out = g.run();
    ASSERT_TRUE(out.has_value()) << out.status().message();
    EXPECT_EQ(values_of((*out)[0]), (std::vector<float>{10, 0, 0, 20})) << "aggregate " << aggregate;
  }
  OneNodeModel p("TreeEnsemble", 17, {{"x", float_tensor({1, 1}, {1})}}, {{"y", TensorProto::FLOAT}});
  build_tree(p);
  p.attr("post_transform", int64_t{4});
  auto out = p.run();
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_TRUE(std::isnan(values_of((*out)[0])[0])) << "probit(10) is outside (0, 1)";
}

TEST(MlTest, TreeEnsembleRefusesCyclesAndStrayIds) {
  OneNodeModel cycle("TreeEnsemble", 17, {{"x", float_tensor({1, 1}, {6})}}, {{"y", TensorProto::FLOAT}});
  build_tree(cycle, /*false_of_1=*/0, /*false_leaf_1=*/0);  // node 1 -> node 0 -> node 1 ...
  auto looped = cycle.run();
  ASSERT_FALSE(looped.has_value());
  EXPECT_NE(looped.status().message().find("cycle"), std::string::npos) << looped.status().message();
  OneNodeModel stray("TreeEnsemble", 17, {{"x", float_tensor({1, 1}, {6})}}, {{"y", TensorProto::FLOAT}});
  build_tree(stray, /*false_of_1=*/9);
  auto refused = stray.run();
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.status().message().find("out of range"), std::string::npos) << refused.status().message();
}

}  // namespace
}  // namespace loom
