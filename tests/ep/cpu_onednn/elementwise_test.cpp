// Unary eltwise ops and broadcasting binary ops on cpu_onednn vs the
// reference EP, standalone and chained.
#include "ep_compare.h"

namespace loom::ep_testing {
namespace {

TEST(OnednnUnary, EachOpMatchesReference) {
  const std::vector<std::string> ops = {"Relu", "LeakyRelu", "Sigmoid", "Tanh", "Elu", "Selu", "Exp", "Abs",
                                        "Neg", "Softplus", "HardSwish", "HardSigmoid", "Clip"};
  for (const std::string& op : ops) {
    testing::ModelBuilder m;
    m.input("x", kFloat, {2, 3, 4, 5});
    m.node(op, {"x"}, {"y"});
    m.output("y", kFloat, {});
    expect_matches_reference(m.bytes(), {{"x", random_tensor({2, 3, 4, 5}, 1, -4.f, 4.f)}}, {}, op);
  }
  // Positive-only domains.
  for (const std::string& op : {"Sqrt"}) {
    testing::ModelBuilder m;
    m.input("x", kFloat, {3, 7});
    m.node(op, {"x"}, {"y"});
    m.output("y", kFloat, {});
    expect_matches_reference(m.bytes(), {{"x", random_tensor({3, 7}, 2, 0.1f, 5.f)}}, {}, op);
  }
}

// Pow by a constant: negative bases with whole exponents keep their sign,
// fractional exponents on positive bases, and 1 / x as Reciprocal.
TEST(OnednnUnary, PowByAConstantAndReciprocal) {
  const std::vector<std::pair<float, std::pair<float, float>>> cases = {
      {3.f, {-3.f, 3.f}}, {2.f, {-3.f, 3.f}}, {-1.f, {0.5f, 4.f}}, {0.5f, {0.f, 9.f}}, {-1.5f, {0.2f, 5.f}},
      {1.f / 3.f, {0.1f, 8.f}}, {4.f, {-2.f, 2.f}}};
  for (const auto& [exponent, range] : cases) {
    testing::ModelBuilder m;
    m.input("x", kFloat, {4, 33});
    m.float_initializer("e", {}, {exponent});
    m.node("Pow", {"x", "e"}, {"y"});
    m.output("y", kFloat, {});
    expect_matches_reference(m.bytes(), {{"x", random_tensor({4, 33}, 3, range.first, range.second)}}, {1e-5, 1e-6},
                             "Pow " + std::to_string(exponent));
  }
  testing::ModelBuilder m;
  m.input("x", kFloat, {4, 33});
  m.node("Reciprocal", {"x"}, {"y"});
  m.output("y", kFloat, {});
  expect_matches_reference(m.bytes(), {{"x", random_tensor({4, 33}, 4, 0.25f, 4.f)}}, {1e-5, 1e-6}, "Reciprocal");
}

TEST(OnednnUnary, ClipBoundsFromAttributesAndInputs) {
  testing::ModelBuilder old(6);
  old.input("x", kFloat, {10});
  auto& n = old.node("Clip", {"x"}, {"y"});
  add_float_attr(n, "min", -0.5f);
  add_float_attr(n, "max", 0.25f);
  old.output("y", kFloat, {});
  expect_matches_reference(old.bytes(), {{"x", random_tensor({10}, 3)}}, {}, "Clip-6");
  testing::ModelBuilder m(13);
  m.input("x", kFloat, {10});
  m.float_initializer("lo", {}, {-0.3f});
  m.node("Clip", {"x", "lo"}, {"y"});
  m.output("y", kFloat, {});
  expect_matches_reference(m.bytes(), {{"x", random_tensor({10}, 4)}}, {}, "Clip-13 min only");
}

struct BinaryCase {
  std::vector<int64_t> a, b;
};

TEST(OnednnBinary, BroadcastingMatchesReference) {
  const std::vector<BinaryCase> cases = {
      {{2, 3, 4}, {2, 3, 4}}, {{2, 3, 4}, {4}},       {{2, 3, 4}, {}},       {{}, {}},       {{2, 3, 4, 5}, {1, 3, 1, 1}},
      {{2, 3, 4, 5}, {3, 1, 5}}, {{6, 1}, {6, 1}},    {{5}, {1}},            {{2, 1, 1, 8}, {2, 1, 1, 1}},
  };
  for (const std::string& op : {"Add", "Sub", "Mul", "Div", "Max", "Min"})
    for (size_t i = 0; i < cases.size(); ++i) {
      testing::ModelBuilder m;
      m.input("a", kFloat, cases[i].a);
      m.input("b", kFloat, cases[i].b);
      m.node(op, {"a", "b"}, {"y"});
      m.output("y", kFloat, {});
      // Div stays away from zero divisors.
      expect_matches_reference(m.bytes(),
                               {{"a", random_tensor(cases[i].a, 50 + i)}, {"b", random_tensor(cases[i].b, 60 + i, 0.5f, 2.f)}},
                               {}, op + " case " + std::to_string(i));
    }
}

TEST(OnednnBinary, FirstOperandBroadcastsForCommutativeOps) {
  for (const std::string& op : {"Add", "Mul", "Max", "Min"}) {
    testing::ModelBuilder m;
    m.input("a", kFloat, {1, 4, 1});
    m.input("b", kFloat, {3, 4, 5});
    m.node(op, {"a", "b"}, {"y"});
    m.output("y", kFloat, {});
    expect_matches_reference(m.bytes(), {{"a", random_tensor({1, 4, 1}, 1)}, {"b", random_tensor({3, 4, 5}, 2)}}, {}, op);
  }
}

// Symbolic dims (a dynamic-size model: a map and its upsampled copy): the
// claim cannot tell which operand broadcasts, the program built for each
// run's shapes does.
TEST(OnednnBinary, SymbolicDimsAreClaimedAndBroadcastWhicheverWayARunNeeds) {
  for (const std::string& op : {"Add", "Sub", "Mul", "Div"}) {
    testing::ModelBuilder m;
    m.input("a", kFloat, {1, 3, -1, -1});
    m.input("b", kFloat, {1, 3, -1, -1});
    m.node(op, {"a", "b"}, {"s"});
    m.node("Relu", {"s"}, {"y"});
    m.output("y", kFloat, {});
    auto s = make_session(onednn_env(), m.bytes());
    auto reference = make_session(reference_env(), m.bytes());
    ASSERT_TRUE(s && reference) << op;
    const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {
        {{1, 3, 4, 6}, {1, 3, 4, 6}}, {{1, 3, 4, 6}, {1, 3, 1, 6}}, {{1, 3, 1, 1}, {1, 3, 5, 2}}, {{1, 3, 5, 1}, {1, 3, 1, 4}}};
    for (size_t i = 0; i < shapes.size(); ++i) {
      const std::map<std::string, Tensor> in = {{"a", random_tensor(shapes[i].first, 70 + i)},
                                                {"b", random_tensor(shapes[i].second, 80 + i, 0.5f, 2.f)}};
      auto got = s->run(in);
      auto want = reference->run(in);
      ASSERT_TRUE(got.has_value()) << op << " " << i << ": " << got.status().message();
      ASSERT_TRUE(want.has_value()) << want.status().message();
      expect_close((*want)[0], (*got)[0], {}, op + " shapes " + std::to_string(i));
    }
  }
}

TEST(OnednnBinary, ChainsOfBinaryAndUnaryOps) {
  // ((a + c1) * b - c2) -> Relu -> / c3 -> Tanh, constants broadcast.
  testing::ModelBuilder m;
  m.input("a", kFloat, {2, 4, 3, 3});
  m.input("b", kFloat, {2, 4, 3, 3});
  random_weights(m, "c1", {4, 1, 1}, 1);
  random_weights(m, "c2", {3}, 2);
  m.float_initializer("c3", {1}, {1.5f});
  m.node("Add", {"a", "c1"}, {"t1"});
  m.node("Mul", {"t1", "b"}, {"t2"});
  m.node("Sub", {"t2", "c2"}, {"t3"});
  m.node("Relu", {"t3"}, {"t4"});
  m.node("Div", {"t4", "c3"}, {"t5"});
  m.node("Tanh", {"t5"}, {"y"});
  m.output("y", kFloat, {});
  expect_matches_reference(m.bytes(), {{"a", random_tensor({2, 4, 3, 3}, 3)}, {"b", random_tensor({2, 4, 3, 3}, 4)}});
}

}  // namespace
}  // namespace loom::ep_testing

namespace loom::ep_testing {
namespace {

// A chain longer than one oneDNN primitive's post-op limit (32): the chain is
// split over primitives (a chain of 33 constant Adds used to fail at its
// first run with "could not append a binary post-op").
TEST(OnednnBinary, ChainLongerThanThePostOpLimitMatchesReference) {
  testing::ModelBuilder m;
  m.input("x", kFloat, {2, 3, 4, 5});
  std::string prev = "x";
  for (int i = 0; i < 80; ++i) {
    const std::string c = "c" + std::to_string(i), out = i == 79 ? "y" : "v" + std::to_string(i);
    random_weights(m, c, i % 2 ? std::vector<int64_t>{5} : std::vector<int64_t>{2, 3, 4, 5}, 100 + i);
    m.node(i % 3 == 2 ? "Mul" : "Add", {prev, c}, {out});
    prev = out;
  }
  m.output("y", kFloat, {});
  expect_matches_reference(m.bytes(), {{"x", random_tensor({2, 3, 4, 5}, 7)}}, {}, "80-node binary chain");
}

}  // namespace
}  // namespace loom::ep_testing
