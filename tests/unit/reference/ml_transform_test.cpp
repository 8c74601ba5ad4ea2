// ai.onnx.ml Scaler, Normalizer and Imputer on the reference EP, with
// per-feature lists of the wrong length refused.
#include <cmath>
#include <limits>

#include "unit/reference/ml_test_util.h"

namespace loom {
namespace {

using ::onnx::TensorProto;
using testing::expect_floats_near;
using testing::expect_refused;
using testing::MlNode;
using testing::ml_floats;
using testing::run_ok;

const float kNaNf = std::numeric_limits<float>::quiet_NaN();

TEST(MlTransformTest, Scaler) {
  // (x - [1, 2]) * [2, 0.5].
  MlNode g("Scaler", 1, {{"x", ml_floats({2, 2}, {1, 2, 3, 6})}}, {{"y", TensorProto::FLOAT}});
  g.floats("offset", {1, 2}).floats("scale", {2, 0.5f});
  expect_floats_near(run_ok(g).at(0), {2, 2}, {0, 0, 4, 2});
  // One offset and scale for every feature, int64 input.
  MlNode b("Scaler", 1, {{"x", testing::ml_int64s({2, 2}, {1, 2, 3, 6})}}, {{"y", TensorProto::FLOAT}});
  b.floats("offset", {1}).floats("scale", {2});
  expect_floats_near(run_ok(b).at(0), {2, 2}, {0, 2, 4, 10});
  MlNode bad("Scaler", 1, {{"x", ml_floats({1, 2}, {1, 2})}}, {{"y", TensorProto::FLOAT}});
  bad.floats("offset", {1, 2, 3}).floats("scale", {1});
  expect_refused(bad, "offset has 3 entries for 2 features");
}

TEST(MlTransformTest, NormalizerMaxL1L2) {
  // MAX divides by the row's largest value (not magnitude); a zero divisor
  // leaves the row as it is (ONNX's tests, ONNX Runtime).
  MlNode m("Normalizer", 1, {{"x", ml_floats({4, 2}, {1, 2, -4, 3, 0, 5, 0, 0})}}, {{"y", TensorProto::FLOAT}});
  m.str("norm", "MAX");
  expect_floats_near(run_ok(m).at(0), {4, 2}, {0.5, 1, -4.0 / 3, 1, 0, 1, 0, 0});
  MlNode l1("Normalizer", 1, {{"x", testing::ml_int32s({2, 2}, {1, -3, 0, 0})}}, {{"y", TensorProto::FLOAT}});
  l1.str("norm", "L1");
  expect_floats_near(run_ok(l1).at(0), {2, 2}, {0.25, -0.75, 0, 0});
  MlNode l2("Normalizer", 1, {{"x", testing::ml_doubles({2}, {3, -4})}}, {{"y", TensorProto::FLOAT}});
  l2.str("norm", "L2");
  expect_floats_near(run_ok(l2).at(0), {2}, {0.6, -0.8});
  MlNode bad("Normalizer", 1, {{"x", ml_floats({1, 2}, {1, 2})}}, {{"y", TensorProto::FLOAT}});
  bad.str("norm", "L3");
  expect_refused(bad, "norm 'L3'");
}

TEST(MlTransformTest, Imputer) {
  // NaN replaced per feature.
  MlNode n("Imputer", 1, {{"x", ml_floats({2, 2}, {1, kNaNf, kNaNf, 4})}}, {{"y", TensorProto::FLOAT}});
  n.floats("imputed_value_floats", {10, 20}).f("replaced_value_float", kNaNf);
  expect_floats_near(run_ok(n).at(0), {2, 2}, {1, 20, 10, 4});
  // The default replaced value 0, one imputed value for all features.
  MlNode z("Imputer", 1, {{"x", ml_floats({1, 3}, {0, 5, 0})}}, {{"y", TensorProto::FLOAT}});
  z.floats("imputed_value_floats", {7});
  expect_floats_near(run_ok(z).at(0), {1, 3}, {7, 5, 7});
  // int64: -1 replaced; the output stays int64.
  MlNode i("Imputer", 1, {{"x", testing::ml_int64s({2, 2}, {-1, 3, 4, -1})}}, {{"y", TensorProto::INT64}});
  i.ints("imputed_value_int64s", {100, 200}).i("replaced_value_int64", -1);
  auto out = run_ok(i);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(testing::int64_values_of(out[0]), (std::vector<int64_t>{100, 3, 4, 200}));

  MlNode wrong("Imputer", 1, {{"x", ml_floats({1, 2}, {0, 1})}}, {{"y", TensorProto::FLOAT}});
  wrong.floats("imputed_value_floats", {1, 2, 3});
  expect_refused(wrong, "imputed_value_floats has 3 entries for 2 features");
  MlNode kind("Imputer", 1, {{"x", testing::ml_int64s({1, 2}, {0, 1})}}, {{"y", TensorProto::INT64}});
  kind.floats("imputed_value_floats", {1, 2});
  expect_refused(kind, "imputed_value_int64s is empty");
}

}  // namespace
}  // namespace loom
