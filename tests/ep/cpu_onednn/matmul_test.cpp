// MatMul (2-D, batched, broadcast batch dims, 1-D operands, constant or
// runtime weights) and Gemm (transposes, alpha, beta, C shapes) on
// cpu_onednn vs the reference EP, with post-op chains.
#include "ep_compare.h"

namespace loom::ep_testing {
namespace {

std::string matmul_model(const std::vector<int64_t>& a, const std::vector<int64_t>& b, bool constant_b) {
  testing::ModelBuilder m;
  m.input("a", kFloat, a);
  if (constant_b) random_weights(m, "b", b, 3, b.size() >= 2 ? b[b.size() - 2] : b[0]);
  else m.input("b", kFloat, b);
  m.node("MatMul", {"a", "b"}, {"y"});
  m.output("y", kFloat, {});
  return m.bytes();
}

TEST(OnednnMatMul, MatchesReferenceAcrossShapes) {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {
      {{4, 5}, {5, 6}},          {{1, 64}, {64, 32}},         {{2, 3, 4, 5}, {5, 6}},
      {{3, 1, 4, 5}, {1, 2, 5, 6}}, {{2, 7, 5}, {2, 5, 3}},   {{5}, {5, 4}},
      {{3, 4, 5}, {5}},          {{2, 1, 8, 16}, {16, 4}},
  };
  for (size_t i = 0; i < shapes.size(); ++i)
    for (bool constant_b : {true, false}) {
      std::map<std::string, Tensor> in = {{"a", random_tensor(shapes[i].first, 10 + i)}};
      if (!constant_b) in["b"] = random_tensor(shapes[i].second, 20 + i);
      expect_matches_reference(matmul_model(shapes[i].first, shapes[i].second, constant_b), in, {},
                               "matmul case " + std::to_string(i) + (constant_b ? " (constant B)" : ""));
    }
}

TEST(OnednnMatMul, BiasAndActivationChainFuse) {
  // A transformer-style feed-forward: MatMul -> Add(bias) -> Relu -> MatMul -> Add(residual).
  testing::ModelBuilder m;
  m.input("x", kFloat, {2, 8, 16});
  random_weights(m, "w1", {16, 32}, 1, 16);
  random_weights(m, "b1", {32}, 2);
  random_weights(m, "w2", {32, 16}, 3, 32);
  m.node("MatMul", {"x", "w1"}, {"h"});
  m.node("Add", {"b1", "h"}, {"hb"});
  m.node("Relu", {"hb"}, {"r"});
  m.node("MatMul", {"r", "w2"}, {"o"});
  m.node("Add", {"o", "x"}, {"y"});
  m.output("y", kFloat, {});
  expect_matches_reference(m.bytes(), {{"x", random_tensor({2, 8, 16}, 4)}});
}

TEST(OnednnMatMul, BatchFoldedIntoRowsKeepsEveryBroadcast) {
  // Constant 2-D weights under a rank-4 input: the batch folds into rows and
  // each post-op operand must fold with it: a per-column bias, a full-shape
  // residual, a per-row-of-batch scale ([2,1,1,N] varies along batch only:
  // not foldable, so the chain stops there) and a scalar.
  testing::ModelBuilder m;
  m.input("x", kFloat, {2, 3, 4, 16});
  m.input("r", kFloat, {2, 3, 4, 8});
  m.input("s", kFloat, {2, 1, 1, 8});
  random_weights(m, "w", {16, 8}, 1, 16);
  random_weights(m, "bias", {8}, 2);
  m.float_initializer("half", {}, {0.5f});
  m.node("MatMul", {"x", "w"}, {"h"});
  m.node("Add", {"h", "bias"}, {"hb"});
  m.node("Add", {"hb", "r"}, {"hr"});
  m.node("Mul", {"hr", "half"}, {"hh"});
  m.node("Mul", {"hh", "s"}, {"y"});
  m.output("y", kFloat, {});
  expect_matches_reference(m.bytes(), {{"x", random_tensor({2, 3, 4, 16}, 5)},
                                       {"r", random_tensor({2, 3, 4, 8}, 6)},
                                       {"s", random_tensor({2, 1, 1, 8}, 7)}});
}

struct GemmCase {
  int64_t m, k, n;
  bool trans_a, trans_b;
  float alpha, beta;
  std::vector<int64_t> c;  // empty: no C
  bool constant_c;
};

TEST(OnednnGemm, MatchesReferenceAcrossAttributes) {
  const std::vector<GemmCase> cases = {
      {4, 5, 6, false, false, 1.f, 1.f, {}, true},      {4, 5, 6, true, false, 1.f, 1.f, {6}, true},
      {4, 5, 6, false, true, 1.f, 1.f, {4, 6}, false},  {4, 5, 6, true, true, 0.5f, 2.f, {1, 6}, true},
      {3, 7, 2, false, true, 2.f, 1.f, {3, 1}, false},  {1, 2048, 1000, false, true, 1.f, 1.f, {1000}, true},
      {4, 5, 6, false, false, 1.f, 0.5f, {}, true},     {2, 3, 4, false, false, 1.f, 1.f, {1}, true},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const GemmCase& c = cases[i];
    testing::ModelBuilder m;
    const std::vector<int64_t> a = c.trans_a ? std::vector<int64_t>{c.k, c.m} : std::vector<int64_t>{c.m, c.k};
    m.input("a", kFloat, a);
    random_weights(m, "b", c.trans_b ? std::vector<int64_t>{c.n, c.k} : std::vector<int64_t>{c.k, c.n}, 5, c.k);
    std::map<std::string, Tensor> in = {{"a", random_tensor(a, 30 + i)}};
    if (!c.c.empty()) {
      if (c.constant_c) random_weights(m, "c", c.c, 6);
      else {
        m.input("c", kFloat, c.c);
        in["c"] = random_tensor(c.c, 40 + i);
      }
    }
    auto& n = c.c.empty() ? m.node("Gemm", {"a", "b"}, {"y"}) : m.node("Gemm", {"a", "b", "c"}, {"y"});
    testing::add_int_attr(n, "transA", c.trans_a);
    testing::add_int_attr(n, "transB", c.trans_b);
    add_float_attr(n, "alpha", c.alpha);
    add_float_attr(n, "beta", c.beta);
    m.output("y", kFloat, {});
    expect_matches_reference(m.bytes(), in, {}, "gemm case " + std::to_string(i));
  }
}

TEST(OnednnGemm, WithActivationChain) {
  testing::ModelBuilder m;
  m.input("a", kFloat, {3, 8});
  random_weights(m, "b", {4, 8}, 1, 8);
  random_weights(m, "c", {4}, 2);
  testing::add_int_attr(m.node("Gemm", {"a", "b", "c"}, {"g"}), "transB", 1);
  m.node("Sigmoid", {"g"}, {"s"});
  m.node("Mul", {"g", "s"}, {"y"});  // swish: g feeds two nodes, so no fusion past it
  m.output("y", kFloat, {});
  expect_matches_reference(m.bytes(), {{"a", random_tensor({3, 8}, 3)}});
}

}  // namespace
}  // namespace loom::ep_testing
