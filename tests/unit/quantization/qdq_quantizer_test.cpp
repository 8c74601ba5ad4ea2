// The QDQ rewrite's graph surgery on the cases a straight chain does not
// show (tests/cli/quantize_check.py covers formulas, accuracy and ONNX
// Runtime): weights other nodes still read in float, quantized activations
// that are graph outputs, excluded nodes, missing ranges, old opsets. Each
// rewritten model must still load and run on the reference EP.
#include <gtest/gtest.h>

#include "common/model_builder.h"
#include "common/test_env.h"
#include "quantization/qdq_quantizer.h"

namespace loom::quant {
namespace {

std::map<std::string, TensorRange> ranges_for(std::initializer_list<std::string> names) {
  std::map<std::string, TensorRange> r;
  for (const std::string& n : names) r[n] = TensorRange{-2.0f, 3.0f};
  return r;
}

int count_op(const ::onnx::ModelProto& m, const std::string& op) {
  int n = 0;
  for (const auto& node : m.graph().node()) n += node.op_type() == op;
  return n;
}

bool has_initializer(const ::onnx::ModelProto& m, const std::string& name) {
  for (const auto& t : m.graph().initializer())
    if (t.name() == name) return true;
  return false;
}

// x [2, 4] -> MatMul W [4, 3] -> y (an output).
testing::ModelBuilder matmul_model(int64_t opset = 13) {
  testing::ModelBuilder m(opset);
  m.input("x", ::onnx::TensorProto::FLOAT, {2, 4});
  m.float_initializer("W", {4, 3}, std::vector<float>(12, 0.5f));
  m.node("MatMul", {"x", "W"}, {"y"}, "matmul");
  m.output("y", ::onnx::TensorProto::FLOAT, {2, 3});
  return m;
}

// The same with Identity(W) -> w_copy (an output) reading W in float.
testing::ModelBuilder shared_weight_model() {
  testing::ModelBuilder m = matmul_model();
  m.node("Identity", {"W"}, {"w_copy"}, "identity");
  m.output("w_copy", ::onnx::TensorProto::FLOAT, {4, 3});
  return m;
}

void expect_runs(const ::onnx::ModelProto& model) {
  auto s = Session::create_from_bytes(loom::testing::reference_env(), model.SerializeAsString());
  ASSERT_TRUE(s.has_value()) << s.status().message();
  auto out = (*s)->run({{"x", loom::testing::float_tensor({2, 4}, std::vector<float>(8, 1.0f))}});
  ASSERT_TRUE(out.has_value()) << out.status().message();
}

TEST(QdqQuantizerTest, WeightStillReadInFloatKeepsItsFloatCopy) {
  testing::ModelBuilder m = shared_weight_model();
  ::onnx::ModelProto model = m.proto();
  auto report = quantize_qdq(model, ranges_for({"x", "y"}), QdqOptions{});
  ASSERT_TRUE(report.has_value()) << report.status().message();
  EXPECT_EQ(report->quantized_nodes, 1);
  EXPECT_EQ(report->weights, 1);
  EXPECT_TRUE(has_initializer(model, "W")) << "Identity still reads the float weights";
  EXPECT_TRUE(has_initializer(model, "W_quantized"));
  EXPECT_EQ(count_op(model, "QuantizeLinear"), 2) << "x and y";
  // y stays a graph output made by MatMul; its Q/DQ pair reads it.
  for (const auto& n : model.graph().node())
    if (n.op_type() == "MatMul") EXPECT_EQ(n.output(0), "y");
  expect_runs(model);
}

TEST(QdqQuantizerTest, UnusedFloatWeightsAreDropped) {
  testing::ModelBuilder m = matmul_model();
  ::onnx::ModelProto model = m.proto();
  QdqOptions options;
  options.per_channel = true;
  auto report = quantize_qdq(model, ranges_for({"x", "y"}), options);
  ASSERT_TRUE(report.has_value()) << report.status().message();
  EXPECT_FALSE(has_initializer(model, "W"));
  for (const auto& t : model.graph().initializer())
    if (t.name() == "W_scale") EXPECT_EQ(t.dims_size() == 1 ? t.dims(0) : 0, 3) << "one scale per output column";
  expect_runs(model);
}

TEST(QdqQuantizerTest, ExcludedNodesAndNodesWithoutRangesStayFloat) {
  testing::ModelBuilder m = shared_weight_model();
  ::onnx::ModelProto excluded = m.proto();
  QdqOptions options;
  options.exclude_nodes = {"matmul"};
  auto report = quantize_qdq(excluded, ranges_for({"x", "y"}), options);
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->quantized_nodes, 0);
  EXPECT_EQ(count_op(excluded, "QuantizeLinear"), 0);

  ::onnx::ModelProto no_range = m.proto();
  report = quantize_qdq(no_range, ranges_for({"y"}), QdqOptions{});
  ASSERT_TRUE(report.has_value());
  ASSERT_EQ(report->skipped.size(), 1u);
  EXPECT_EQ(report->skipped[0].first, "matmul (MatMul)");
  EXPECT_NE(report->skipped[0].second.find("no calibrated range for input 'x'"), std::string::npos);
  expect_runs(no_range);
}

TEST(QdqQuantizerTest, OpsetTooOldIsRefusedNamingIt) {
  testing::ModelBuilder m = matmul_model(9);
  ::onnx::ModelProto model = m.proto();
  auto report = quantize_qdq(model, ranges_for({"x", "y"}), QdqOptions{});
  ASSERT_FALSE(report.has_value());
  EXPECT_NE(report.status().message().find("opset 9"), std::string::npos) << report.status().message();
}

// A Conv whose data input is a constant is not one the QDQ format covers:
// left in float and reported, not quantized as if it were weights.
TEST(QdqQuantizerTest, ConvOverAConstantStaysFloat) {
  testing::ModelBuilder m(13);
  m.input("w_in", ::onnx::TensorProto::FLOAT, {2, 1, 3, 3});
  m.float_initializer("X", {1, 1, 4, 4}, std::vector<float>(16, 1.0f));
  m.float_initializer("B", {2}, {0.5f, -0.5f});
  m.node("Conv", {"X", "w_in", "B"}, {"y"}, "conv");
  m.output("y", ::onnx::TensorProto::FLOAT, {1, 2, 2, 2});
  ::onnx::ModelProto model = m.proto();
  auto report = quantize_qdq(model, ranges_for({"w_in", "y"}), QdqOptions{});
  ASSERT_TRUE(report.has_value()) << report.status().message();
  EXPECT_EQ(report->quantized_nodes, 0);
  ASSERT_EQ(report->skipped.size(), 1u);
  EXPECT_EQ(report->skipped[0].second, "data input 'X' is a constant");
  EXPECT_EQ(count_op(model, "DequantizeLinear"), 0);
}

}  // namespace
}  // namespace loom::quant
