// Claims without known ranks: graph inputs declared with no shape at all, so
// shape inference knows no rank. cpu_onednn claims the ops whose builders
// handle any rank, checks the concrete shapes when a program is built, and
// fails a shape it cannot handle with an error naming node and op.
#include "ep_compare.h"

namespace loom::ep_testing {
namespace {

// The model with every graph input's and output's shape removed.
std::string without_shapes(testing::ModelBuilder& m) {
  auto* g = m.proto().mutable_graph();
  for (auto& vi : *g->mutable_input()) vi.mutable_type()->mutable_tensor_type()->clear_shape();
  for (auto& vi : *g->mutable_output()) vi.mutable_type()->mutable_tensor_type()->clear_shape();
  return m.bytes();
}

// A two-input binary / MatMul model y = op(a, b) with unknown ranks.
std::string two_input(const std::string& op) {
  testing::ModelBuilder m;
  m.input("a", kFloat, {});
  m.input("b", kFloat, {});
  m.node(op, {"a", "b"}, {"y"});
  m.output("y", kFloat, {});
  return without_shapes(m);
}

TEST(OnednnUnknownRank, MatMulBatchedAndBroadcast) {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{4, 5}, {5, 3}}, {{2, 3, 4, 5}, {5, 6}}, {{3, 1, 4, 5}, {2, 5, 6}}, {{5}, {2, 5, 3}}, {{2, 4, 5}, {5}}};
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& [a, b] = cases[i];
    expect_matches_reference(two_input("MatMul"), {{"a", random_tensor(a, 1 + i)}, {"b", random_tensor(b, 9 + i)}},
                             {}, "matmul case " + std::to_string(i));
  }
}

TEST(OnednnUnknownRank, BinaryOpsBroadcastTheSecondOperand) {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {
      {{2, 3, 4}, {2, 3, 4}}, {{2, 3, 4}, {4}}, {{2, 1, 3, 4}, {2, 1, 1, 4}}, {{3}, {}}};
  for (const std::string& op : {"Add", "Sub", "Mul", "Div", "Max", "Min"})
    for (size_t i = 0; i < shapes.size(); ++i)
      expect_matches_reference(two_input(op),
                               {{"a", random_tensor(shapes[i].first, 2 + i)},
                                {"b", random_tensor(shapes[i].second, 20 + i, 0.5f, 1.5f)}},
                               {}, op + " case " + std::to_string(i));
  // Commutative ops may take the broadcast operand first.
  expect_matches_reference(two_input("Add"), {{"a", random_tensor({4}, 3)}, {"b", random_tensor({2, 3, 4}, 4)}}, {},
                           "Add with the first operand broadcast");
}

TEST(OnednnUnknownRank, SoftmaxLayerNormEltwiseTranspose) {
  testing::ModelBuilder m;
  m.input("x", kFloat, {});
  random_weights(m, "scale", {8}, 1);
  random_weights(m, "bias", {8}, 2);
  m.node("LayerNormalization", {"x", "scale", "bias"}, {"ln"});
  m.node("Tanh", {"ln"}, {"t"});
  m.node("Softmax", {"t"}, {"s"});
  add_ints_attr(m.node("Transpose", {"s"}, {"p"}), "perm", {0, 2, 1});
  m.node("Transpose", {"p"}, {"y"});  // no perm: reverses any rank
  m.output("y", kFloat, {});
  expect_matches_reference(without_shapes(m), {{"x", random_tensor({2, 3, 8}, 5)}});
}

TEST(OnednnUnknownRank, AttentionBlockLikeAnExportedEncoder) {
  // x [B, S, 16] -> q, k, v projections -> heads (Reshape with a constant
  // shape, Transpose) -> scores / sqrt(d) + mask -> Softmax -> context ->
  // output projection + residual -> LayerNorm.
  testing::ModelBuilder m;
  m.input("x", kFloat, {});
  m.input("mask", kFloat, {});
  for (const char* w : {"wq", "wk", "wv", "wo"}) random_weights(m, w, {16, 16}, w[1], 16);
  random_weights(m, "bq", {16}, 11);
  random_weights(m, "scale", {16}, 12);
  random_weights(m, "bias", {16}, 13);
  m.float_initializer("sqrt_d", {}, {2.f});
  int64_initializer(m, "heads_shape", {0, 0, 4, 4});
  int64_initializer(m, "merged_shape", {0, 0, 16});
  m.node("MatMul", {"x", "wq"}, {"q0"});
  m.node("Add", {"q0", "bq"}, {"q1"});
  m.node("MatMul", {"x", "wk"}, {"k0"});
  m.node("MatMul", {"x", "wv"}, {"v0"});
  m.node("Reshape", {"q1", "heads_shape"}, {"q2"});
  m.node("Reshape", {"k0", "heads_shape"}, {"k2"});
  m.node("Reshape", {"v0", "heads_shape"}, {"v2"});
  add_ints_attr(m.node("Transpose", {"q2"}, {"q"}), "perm", {0, 2, 1, 3});
  add_ints_attr(m.node("Transpose", {"k2"}, {"kt"}), "perm", {0, 2, 3, 1});
  add_ints_attr(m.node("Transpose", {"v2"}, {"v"}), "perm", {0, 2, 1, 3});
  m.node("MatMul", {"q", "kt"}, {"s0"});
  m.node("Div", {"s0", "sqrt_d"}, {"s1"});
  m.node("Add", {"s1", "mask"}, {"s2"});
  m.node("Softmax", {"s2"}, {"p"});
  m.node("MatMul", {"p", "v"}, {"c0"});
  add_ints_attr(m.node("Transpose", {"c0"}, {"c1"}), "perm", {0, 2, 1, 3});
  m.node("Reshape", {"c1", "merged_shape"}, {"c2"});
  m.node("MatMul", {"c2", "wo"}, {"o"});
  m.node("Add", {"o", "x"}, {"r"});
  m.node("LayerNormalization", {"r", "scale", "bias"}, {"y"});
  m.output("y", kFloat, {});
  const std::string model = without_shapes(m);
  for (int64_t seq : {5, 12})
    expect_matches_reference(model,
                             {{"x", random_tensor({2, seq, 16}, 6 + seq)},
                              {"mask", random_tensor({2, 1, 1, seq}, 7 + seq, -2.f, 0.f)}},
                             {1e-4, 1e-5}, "seq " + std::to_string(seq));
}

// Runs a model claimed by cpu_onednn on shapes its builder rejects: the run
// fails with a message naming the node and its op (and the process lives on).
void expect_build_error(const std::string& model, const std::map<std::string, Tensor>& inputs,
                        const std::string& node_label, const std::string& what) {
  auto s = make_session(onednn_env(), model);
  ASSERT_TRUE(s) << what;
  for (const auto& n : s->placement().nodes) EXPECT_EQ(n.provider, "cpu_onednn") << what << ": " << n.node_name;
  auto got = s->run(inputs);
  ASSERT_FALSE(got.has_value()) << what;
  EXPECT_NE(got.status().message().find(node_label), std::string::npos)
      << what << ": " << got.status().message();
}

// oneDNN binary broadcasts only its second operand: a first operand that
// must broadcast (Sub / Div, or both operands) is expanded by a host step.
// Before, the run failed ("the first operand would need broadcasting"), as
// affine_grid's expanded ONNX tests showed with cpu_onednn first.
TEST(OnednnUnknownRank, FirstOperandThatBroadcastsIsExpanded) {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{4}, {2, 3, 4}}, {{3, 1}, {3, 4}}, {{2, 1, 4}, {1, 3, 4}}, {{2, 1, 4}, {3, 1}}};
  for (const char* op : {"Sub", "Div", "Mul", "Add"})
    for (size_t i = 0; i < cases.size(); ++i)
      expect_matches_reference(two_input(op),
                               {{"a", random_tensor(cases[i].first, 1 + i, 0.5f, 2.f)},
                                {"b", random_tensor(cases[i].second, 9 + i, 0.5f, 2.f)}},
                               {}, std::string(op) + " case " + std::to_string(i));
}

TEST(OnednnUnknownRank, ShapesTheBuilderCannotHandleFailClearly) {
  expect_build_error(two_input("Add"), {{"a", random_tensor({2, 3}, 1)}, {"b", random_tensor({4}, 2)}},
                     "Add node 'Add_1'", "Add with shapes that do not broadcast");
  expect_build_error(two_input("MatMul"), {{"a", random_tensor({2, 3}, 1)}, {"b", random_tensor({4, 5}, 2)}},
                     "MatMul node 'MatMul_1'", "MatMul with different inner dims");
  expect_build_error(two_input("MatMul"),
                     {{"a", random_tensor({1, 1, 1, 1, 1, 1, 2, 3}, 1)}, {"b", random_tensor({3, 2}, 2)}},
                     "MatMul node 'MatMul_1'", "MatMul above rank 6");
  {
    testing::ModelBuilder m;
    m.input("x", kFloat, {});
    add_ints_attr(m.node("Transpose", {"x"}, {"y"}), "perm", {1, 0});
    m.output("y", kFloat, {});
    expect_build_error(without_shapes(m), {{"x", random_tensor({2, 3, 4}, 1)}}, "Transpose node 'Transpose_1'",
                       "Transpose whose perm does not match the rank");
  }
  {
    testing::ModelBuilder m;
    m.input("x", kFloat, {});
    random_weights(m, "scale", {8}, 1);
    m.node("LayerNormalization", {"x", "scale"}, {"y"});
    m.output("y", kFloat, {});
    expect_build_error(without_shapes(m), {{"x", random_tensor({2, 6}, 1)}},
                       "LayerNormalization node 'LayerNormalization_1'", "LayerNorm scale not matching the input");
  }
  {
    testing::ModelBuilder m;
    m.input("x", kFloat, {});
    m.node("Relu", {"x"}, {"y"});
    m.output("y", kFloat, {});
    std::vector<int64_t> thirteen(13, 1);
    thirteen.back() = 2;
    expect_build_error(without_shapes(m), {{"x", random_tensor(thirteen, 1)}}, "Relu node 'Relu_1'",
                       "Relu above oneDNN's rank limit");
  }
}

TEST(OnednnUnknownRank, ConvWithRank4WeightsIsClaimed) {
  // A 1x3 convolution after a computed reshape, as in PP-OCR rec's neck.
  testing::ModelBuilder m;
  m.input("x", kFloat, {});
  random_weights(m, "w", {6, 4, 1, 3}, 3, 12);
  add_ints_attr(m.node("Conv", {"x", "w"}, {"c"}), "pads", {0, 1, 0, 1});
  m.node("Relu", {"c"}, {"y"});
  m.output("y", kFloat, {});
  const std::string model = without_shapes(m);
  auto s = make_session(environment({"cpu_onednn", "reference"}, FallbackPolicy::kAllow), model);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->placement().nodes.at(0).provider, "cpu_onednn");
  expect_matches_reference(model, {{"x", random_tensor({1, 4, 5, 7}, 4)}});
  // An input whose rank contradicts the weights fails with the node named.
  auto bad = s->run({{"x", random_tensor({4, 5, 7}, 5)}});
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.status().message().find("rank-4"), std::string::npos) << bad.status().message();
}

TEST(OnednnUnknownRank, OldSoftmaxIsClaimedForAnyAxis) {
  // The axis is checked against the rank the program is built for: an axis
  // beyond it is a clear run-time error, not a crash.
  for (int64_t axis : {1, 2, -1}) {
    testing::ModelBuilder m(11);
    m.input("x", kFloat, {});
    testing::add_int_attr(m.node("Softmax", {"x"}, {"y"}), "axis", axis);
    m.output("y", kFloat, {});
    const std::string model = without_shapes(m);
    auto s = make_session(environment({"cpu_onednn", "reference"}, FallbackPolicy::kAllow), model);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->placement().nodes.at(0).provider, "cpu_onednn") << "axis " << axis;
    expect_matches_reference(model, {{"x", random_tensor({2, 3, 5}, 1)}}, {}, "opset 11 axis " + std::to_string(axis));
    auto bad = s->run({{"x", random_tensor({4}, 2)}});
    if (axis != -1) {  // rank 1 has axis 0 only
      ASSERT_FALSE(bad.has_value());
      EXPECT_NE(bad.status().message().find("axis"), std::string::npos) << bad.status().message();
    } else {
      EXPECT_TRUE(bad.has_value()) << bad.status().message();
    }
  }
}

}  // namespace
}  // namespace loom::ep_testing
