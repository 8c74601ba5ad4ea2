// Gradient (ai.onnx.preview.training) is lowered to ordinary nodes by
// reverse-mode differentiation at session creation.
#include <gtest/gtest.h>

#include "common/model_builder.h"
#include "common/test_env.h"

namespace loom {
namespace {

using testing::float_tensor;
using testing::values_of;

::onnx::NodeProto& gradient(testing::ModelBuilder& m, std::initializer_list<std::string> xs, const std::string& y,
                            std::initializer_list<std::string> outputs) {
  auto& g = m.node("Gradient", xs, outputs, "grad", "ai.onnx.preview.training");
  auto* a = g.add_attribute();
  a->set_name("xs");
  a->set_type(::onnx::AttributeProto::STRINGS);
  for (const auto& x : xs) a->add_strings(x);
  auto* b = g.add_attribute();
  b->set_name("y");
  b->set_type(::onnx::AttributeProto::STRING);
  b->set_s(y);
  return g;
}

// y = (a - b) * a / b + (-a); dy/da = (2a - b)/b - 1, dy/db = -a/b - (a - b) * a / b^2
TEST(GradientLoweringTest, MatchesAnalyticDerivatives) {
  testing::ModelBuilder m(13);
  m.import_domain("ai.onnx.preview.training", 1);
  m.input("a", ::onnx::TensorProto::FLOAT, {3});
  m.input("b", ::onnx::TensorProto::FLOAT, {3});
  m.node("Sub", {"a", "b"}, {"d"});
  m.node("Mul", {"d", "a"}, {"p"});
  m.node("Div", {"p", "b"}, {"q"});
  m.node("Neg", {"a"}, {"na"});
  m.node("Add", {"q", "na"}, {"y"});
  gradient(m, {"a", "b"}, "y", {"dy_da", "dy_db"});
  m.output("y", ::onnx::TensorProto::FLOAT, {3});
  m.output("dy_da", ::onnx::TensorProto::FLOAT, {3});
  m.output("dy_db", ::onnx::TensorProto::FLOAT, {3});
  auto s = Session::create_from_bytes(testing::reference_env(), m.bytes());
  ASSERT_TRUE(s.has_value()) << s.status().message();
  const std::vector<float> a = {1, 2, -3}, b = {2, 0.5f, 4};
  auto out = (*s)->run({{"a", float_tensor({3}, a)}, {"b", float_tensor({3}, b)}});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_NEAR(values_of((*out)[1])[i], (2 * a[i] - b[i]) / b[i] - 1, 1e-5);
    EXPECT_NEAR(values_of((*out)[2])[i], -a[i] / b[i] - (a[i] - b[i]) * a[i] / (b[i] * b[i]), 1e-5);
  }
}

TEST(GradientLoweringTest, InputNotOnThePathGetsZeros) {
  testing::ModelBuilder m(13);
  m.import_domain("ai.onnx.preview.training", 1);
  m.input("a", ::onnx::TensorProto::FLOAT, {2});
  m.input("b", ::onnx::TensorProto::FLOAT, {2});
  m.node("Neg", {"a"}, {"y"});
  gradient(m, {"a", "b"}, "y", {"da", "db"});
  m.output("da", ::onnx::TensorProto::FLOAT, {2});
  m.output("db", ::onnx::TensorProto::FLOAT, {2});
  auto s = Session::create_from_bytes(testing::reference_env(), m.bytes());
  ASSERT_TRUE(s.has_value()) << s.status().message();
  auto out = (*s)->run({{"a", float_tensor({2}, {1, 2})}, {"b", float_tensor({2}, {3, 4})}});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ(values_of((*out)[0]), (std::vector<float>{-1, -1}));
  EXPECT_EQ(values_of((*out)[1]), (std::vector<float>{0, 0}));
}

TEST(GradientLoweringTest, UnsupportedOpIsRefusedNamingTheNode) {
  testing::ModelBuilder m(13);
  m.import_domain("ai.onnx.preview.training", 1);
  m.input("a", ::onnx::TensorProto::FLOAT, {2});
  m.node("Exp", {"a"}, {"y"}, "the_exp");
  gradient(m, {"a"}, "y", {"da"});
  m.output("da", ::onnx::TensorProto::FLOAT, {2});
  auto s = Session::create_from_bytes(testing::reference_env(), m.bytes());
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.status().message().find("Exp"), std::string::npos) << s.status().message();
  EXPECT_NE(s.status().message().find("the_exp"), std::string::npos) << s.status().message();
}

TEST(GradientLoweringTest, BroadcastingOperandsAreRefused) {
  testing::ModelBuilder m(13);
  m.import_domain("ai.onnx.preview.training", 1);
  m.input("a", ::onnx::TensorProto::FLOAT, {2, 3});
  m.input("b", ::onnx::TensorProto::FLOAT, {3});
  m.node("Mul", {"a", "b"}, {"y"}, "bmul");
  gradient(m, {"a", "b"}, "y", {"da", "db"});
  m.output("da", ::onnx::TensorProto::FLOAT, {2, 3});
  m.output("db", ::onnx::TensorProto::FLOAT, {3});
  auto s = Session::create_from_bytes(testing::reference_env(), m.bytes());
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.status().message().find("broadcast"), std::string::npos) << s.status().message();
}

}  // namespace
}  // namespace loom
