// constant_folding (basic): Constant nodes become initializers, whether
// their value is a tensor (shared with the node, not evaluated) or another
// attribute form (value_float, value_floats: evaluated by the kernel), and
// nodes reading only constants fold after them.
#include <gtest/gtest.h>

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
