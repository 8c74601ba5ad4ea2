// constant_folding (basic): Constant nodes become initializers, whether
// their value is a tensor (shared with the node, not evaluated) or another
// attribute form (value_float, value_floats: evaluated by the kernel), and
// nodes reading only constants fold after them.
#include <gtest/gtest.h>

#include <algorithm>

#include "common/model_builder.h"
#include "common/test_env.h"

namespace loom {
namespace {

// y = x * (Constant value [1,2,3] + Constant value_floats [10,20,30]) + Constant value_float 0.5
std::string model() {
  testing::ModelBuilder m(14);
  m.input("x", ::onnx::TensorProto::FLOAT, {3});
  ::onnx::NodeProto& tensor_constant = m.node("Constant", {}, {"a"}, "tensor_constant");
  ::onnx::AttributeProto* value = tensor_constant.add_attribute();
  value->set_name("value");
  value->set_type(::onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(::onnx::TensorProto::FLOAT);
  value->mutable_t()->add_dims(3);
  for (float v : {1.f, 2.f, 3.f}) value->mutable_t()->add_float_data(v);
  testing::add_floats_attr(m.node("Constant", {}, {"b"}, "floats_constant"), "value_floats", {10.f, 20.f, 30.f});
  testing::add_float_attr(m.node("Constant", {}, {"c"}, "float_constant"), "value_float", 0.5f);
  m.node("Add", {"a", "b"}, {"ab"}, "constant_add");
  m.node("Mul", {"x", "ab"}, {"xab"}, "mul");
  m.node("Add", {"xab", "c"}, {"y"}, "add");
  m.output("y", ::onnx::TensorProto::FLOAT, {3});
  return m.bytes();
}

std::unique_ptr<Session> session(OptimizationLevel level) {
  Config c;
  c.providers = {"reference"};
  c.optimization_level = level;
  auto s = Session::create_from_bytes(testing::make_env(c), model());
  EXPECT_TRUE(s.has_value()) << s.status().message();
  return s ? std::move(*s) : nullptr;
}

std::vector<std::string> op_types(const Session& s) {
  std::vector<std::string> ops;
  for (const auto& p : s.placement().nodes) ops.push_back(p.op_type);
  return ops;
}

std::vector<float> run(const Session& s) {
  auto out = s.run({{"x", testing::float_tensor({3}, {1, 2, 3})}});
  EXPECT_TRUE(out.has_value()) << out.status().message();
  return out ? testing::values_of((*out)[0]) : std::vector<float>{};
}

TEST(ConstantFoldingTest, ConstantNodesOfEveryFormBecomeInitializers) {
  auto folded = session(OptimizationLevel::kBasic);
  auto unfolded = session(OptimizationLevel::kDisabled);
  ASSERT_TRUE(folded && unfolded);
  EXPECT_EQ(op_types(*folded), (std::vector<std::string>{"Mul", "Add"}));
  EXPECT_EQ(op_types(*unfolded).size(), 6u);
  const std::vector<float> want{11.5f, 44.5f, 99.5f};
  EXPECT_EQ(run(*folded), want);
  EXPECT_EQ(run(*unfolded), want);
}

}  // namespace
}  // namespace loom

namespace loom {
namespace {

// s = Shape(Relu(x), start, end): folded to a constant when x's dims are
// all fixed; kept when one is symbolic (it changes from run to run).
std::unique_ptr<Session> shape_session(const std::vector<int64_t>& x_dims, int64_t start) {
  testing::ModelBuilder m(15);
  m.input("x", ::onnx::TensorProto::FLOAT, x_dims);
  m.node("Relu", {"x"}, {"r"});
  testing::add_int_attr(m.node("Shape", {"r"}, {"s"}), "start", start);
  m.output("s", ::onnx::TensorProto::INT64, {});
  Config c;
  c.providers = {"reference"};
  auto s = Session::create_from_bytes(testing::make_env(c), m.bytes());
  EXPECT_TRUE(s.has_value()) << s.status().message();
  return s ? std::move(*s) : nullptr;
}

TEST(ConstantFoldingTest, ShapeOfFixedDimsFolds) {
  auto s = shape_session({2, 3, 4}, -2);
  ASSERT_TRUE(s);
  for (const std::string& op : op_types(*s)) EXPECT_NE(op, "Shape");
  auto out = s->run({{"x", testing::float_tensor({2, 3, 4}, std::vector<float>(24, 1.f))}});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ(testing::int64_values_of((*out)[0]), (std::vector<int64_t>{3, 4}));
}

TEST(ConstantFoldingTest, ShapeOfASymbolicDimRunsEachTime) {
  auto s = shape_session({-1, 3}, 0);
  ASSERT_TRUE(s);
  const std::vector<std::string> ops = op_types(*s);
  EXPECT_NE(std::find(ops.begin(), ops.end(), "Shape"), ops.end());
  for (int64_t batch : {1, 5}) {
    auto out = s->run({{"x", testing::float_tensor({batch, 3}, std::vector<float>(static_cast<size_t>(batch * 3), 1.f))}});
    ASSERT_TRUE(out.has_value()) << out.status().message();
    EXPECT_EQ(testing::int64_values_of((*out)[0]), (std::vector<int64_t>{batch, 3}));
  }
}

}  // namespace
}  // namespace loom
