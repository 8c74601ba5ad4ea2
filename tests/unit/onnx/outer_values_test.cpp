// If branches reading outer values made by ops ONNX's inference types
// nothing for, as in models saved by ONNX Runtime's optimizer: an opset-13
// LayerNormalization (ONNX Runtime's contrib op in the default domain) and
// a com.microsoft FusedMatMul. Issue 29 found these refused with "reads
// value ... which is neither a graph input, an initializer nor any node's
// output"; they must load and run.
#include <gtest/gtest.h>

#include "common/model_builder.h"
#include "common/test_env.h"

namespace loom {
namespace {

using ::onnx::TensorProto;
using testing::ModelBuilder;

// then: Identity(v); else: Neg(v).
void add_branches(::onnx::NodeProto& iff, const std::string& v) {
  auto branch = [&](const std::string& op, const std::string& name) {
    ::onnx::GraphProto g;
    g.set_name(name);
    auto* n = g.add_node();
    n->set_op_type(op);
    n->add_input(v);
    n->add_output(name + "_out");
    auto* o = g.add_output();
    o->set_name(name + "_out");
    o->mutable_type()->mutable_tensor_type()->set_elem_type(TensorProto::FLOAT);
    return g;
  };
  for (const auto& [attr, op] : {std::pair<std::string, std::string>{"then_branch", "Identity"}, {"else_branch", "Neg"}}) {
    auto* a = iff.add_attribute();
    a->set_name(attr);
    a->set_type(::onnx::AttributeProto::GRAPH);
    *a->mutable_g() = branch(op, attr);
  }
}

std::vector<float> run_both(ModelBuilder& m, const std::map<std::string, Tensor>& base) {
  auto s = Session::create_from_bytes(testing::make_env(), m.bytes());
  EXPECT_TRUE(s.has_value()) << s.status().message();
  if (!s) return {};
  std::vector<float> all;
  for (bool c : {true, false}) {
    std::map<std::string, Tensor> in = base;
    Tensor cond = Tensor::zeros(DType::kBool, {}).value();
    *cond.mutable_data_as<bool>() = c;
    in.emplace("c", cond);
    auto out = (*s)->run(in);
    EXPECT_TRUE(out.has_value()) << out.status().message();
    if (!out) return {};
    for (float v : testing::values_of((*out)[0])) all.push_back(v);
  }
  return all;
}

TEST(OuterValues, IfReadsAnOpset13LayerNormalizationOutput) {
  ModelBuilder m(13);
  m.input("x", TensorProto::FLOAT, {1, 2});
  m.input("c", TensorProto::BOOL, {});
  m.float_initializer("scale", {2}, {1.f, 1.f});
  m.float_initializer("bias", {2}, {0.f, 0.f});
  m.node("LayerNormalization", {"x", "scale", "bias"}, {"ln"}, "ln");
  add_branches(m.node("If", {"c"}, {"y"}, "if"), "ln");
  m.output("y", TensorProto::FLOAT, {1, 2});
  const std::vector<float> y = run_both(m, {{"x", testing::float_tensor({1, 2}, {1.f, 3.f})}});
  ASSERT_EQ(y.size(), 4u);
  EXPECT_NEAR(y[0], -1.f, 1e-4);  // (1 - 2) / 1
  EXPECT_NEAR(y[1], 1.f, 1e-4);
  EXPECT_NEAR(y[2], 1.f, 1e-4);
  EXPECT_NEAR(y[3], -1.f, 1e-4);
}

TEST(OuterValues, IfReadsAComMicrosoftFusedMatMulOutput) {
  ModelBuilder m(13);
  m.import_domain("com.microsoft", 1);
  m.input("x", TensorProto::FLOAT, {1, 2});
  m.input("c", TensorProto::BOOL, {});
  m.float_initializer("w", {2, 2}, {1.f, 0.f, 0.f, 2.f});
  auto& mm = m.node("FusedMatMul", {"x", "w"}, {"p"}, "fmm", "com.microsoft");
  testing::add_float_attr(mm, "alpha", 1.f);
  add_branches(m.node("If", {"c"}, {"y"}, "if"), "p");
  m.output("y", TensorProto::FLOAT, {1, 2});
  EXPECT_EQ(run_both(m, {{"x", testing::float_tensor({1, 2}, {1.f, 3.f})}}),
            (std::vector<float>{1.f, 6.f, -1.f, -6.f}));
}

}  // namespace
}  // namespace loom
