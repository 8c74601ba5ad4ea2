// ai.onnx.ml OneHotEncoder, FeatureVectorizer and CategoryMapper on the
// reference EP, with unknown categories under zeros = 0, mismatched input
// counts / rows and uneven category lists refused.
#include "unit/reference/ml_test_util.h"

namespace loom {
namespace {

using ::onnx::TensorProto;
using testing::expect_floats_near;
using testing::expect_refused;
using testing::MlNode;
using testing::ml_floats;
using testing::run_ok;

TEST(MlEncodeTest, OneHotEncoder) {
  // int64 categories [1, 2, 3]; 9 is none of them (a zero row).
  MlNode g("OneHotEncoder", 1, {{"x", testing::ml_int64s({2, 2}, {1, 3, 2, 9})}}, {{"y", TensorProto::FLOAT}});
  g.ints("cats_int64s", {1, 2, 3});
  expect_floats_near(run_ok(g).at(0), {2, 2, 3}, {1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0});
  MlNode s("OneHotEncoder", 1, {{"x", Tensor::from_strings({2}, {"b", "a"})}}, {{"y", TensorProto::FLOAT}});
  s.strings("cats_strings", {"a", "b"});
  expect_floats_near(run_ok(s).at(0), {2, 2}, {0, 1, 1, 0});
  MlNode d("OneHotEncoder", 1, {{"x", testing::ml_doubles({1}, {2})}}, {{"y", TensorProto::FLOAT}});
  d.ints("cats_int64s", {1, 2, 3});
  expect_floats_near(run_ok(d).at(0), {1, 3}, {0, 1, 0});

  MlNode strict("OneHotEncoder", 1, {{"x", Tensor::from_strings({2}, {"a", "z"})}}, {{"y", TensorProto::FLOAT}});
  strict.strings("cats_strings", {"a", "b"}).i("zeros", 0);
  expect_refused(strict, "'z' is not a category (zeros = 0)");
  MlNode kind("OneHotEncoder", 1, {{"x", Tensor::from_strings({1}, {"a"})}}, {{"y", TensorProto::FLOAT}});
  kind.ints("cats_int64s", {1});
  expect_refused(kind, "but the categories are cats_int64s");
}

TEST(MlEncodeTest, FeatureVectorizer) {
  // [2, 2] padded to 3 columns, then [2, 3] cut to 2.
  MlNode g("FeatureVectorizer", 1,
           {{"a", ml_floats({2, 2}, {1, 2, 3, 4})}, {"b", testing::ml_int64s({2, 3}, {5, 6, 7, 8, 9, 10})}},
           {{"y", TensorProto::FLOAT}});
  g.ints("inputdimensions", {3, 2});
  expect_floats_near(run_ok(g).at(0), {2, 5}, {1, 2, 0, 5, 6, 3, 4, 0, 8, 9});
  // 1-D inputs are one row each.
  MlNode one("FeatureVectorizer", 1, {{"a", testing::ml_int32s({2}, {1, 2})}, {"b", testing::ml_doubles({1}, {3})}},
             {{"y", TensorProto::FLOAT}});
  one.ints("inputdimensions", {2, 1});
  expect_floats_near(run_ok(one).at(0), {1, 3}, {1, 2, 3});

  MlNode rows("FeatureVectorizer", 1, {{"a", ml_floats({2, 1}, {1, 2})}, {"b", ml_floats({3, 1}, {1, 2, 3})}},
              {{"y", TensorProto::FLOAT}});
  rows.ints("inputdimensions", {1, 1});
  expect_refused(rows, "input 1 has 3 rows, input 0 has 2");
  MlNode count("FeatureVectorizer", 1, {{"a", ml_floats({2, 1}, {1, 2})}, {"b", ml_floats({2, 1}, {1, 2})}},
               {{"y", TensorProto::FLOAT}});
  count.ints("inputdimensions", {1});
  expect_refused(count, "2 inputs for 1 inputdimensions entries");
}

TEST(MlEncodeTest, CategoryMapper) {
  MlNode to_int("CategoryMapper", 1, {{"x", Tensor::from_strings({3}, {"b", "x", "a"})}}, {{"y", TensorProto::INT64}});
  to_int.strings("cats_strings", {"a", "b"}).ints("cats_int64s", {1, 2}).i("default_int64", -7);
  auto out = run_ok(to_int);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(testing::int64_values_of(out[0]), (std::vector<int64_t>{2, -7, 1}));
  MlNode to_string("CategoryMapper", 1, {{"x", testing::ml_int64s({2}, {1, 5})}}, {{"y", TensorProto::STRING}});
  to_string.strings("cats_strings", {"a", "b"}).ints("cats_int64s", {1, 2});
  auto back = run_ok(to_string);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].strings(), (std::vector<std::string>{"a", "_Unused"}));
  MlNode uneven("CategoryMapper", 1, {{"x", testing::ml_int64s({1}, {1})}}, {{"y", TensorProto::STRING}});
  uneven.strings("cats_strings", {"a", "b"}).ints("cats_int64s", {1});
  expect_refused(uneven, "cats_int64s has 1 entries, expected 2");
}

}  // namespace
}  // namespace loom
