// The pass manager's controls: levels, disabled passes, stop after run N.
#include "transform/passes/pipeline.h"

#include <gtest/gtest.h>

#include "common/model_builder.h"
#include "common/test_env.h"

namespace loom {
namespace {

// y = Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])) + (c1 + c2):
// one Reshape chain to fold and one constant Add to fold.
std::string model() {
  testing::ModelBuilder m(14);
  m.input("x", ::onnx::TensorProto::FLOAT, {-1, 2, 3});
  m.int64_initializer("i0", {}, {0});
  m.int64_initializer("axes", {1}, {0});
  m.int64_initializer("rest", {1}, {-1});
  m.float_initializer("c1", {1}, {1.f});
  m.float_initializer("c2", {1}, {2.f});
  m.node("Shape", {"x"}, {"s"});
  m.node("Gather", {"s", "i0"}, {"g"});
  m.node("Unsqueeze", {"g", "axes"}, {"u"});
  testing::add_int_attr(m.node("Concat", {"u", "rest"}, {"shape"}), "axis", 0);
  m.node("Reshape", {"x", "shape"}, {"r"});
  m.node("Add", {"c1", "c2"}, {"c"});
  m.node("Add", {"r", "c"}, {"y"});
  m.output("y", ::onnx::TensorProto::FLOAT, {});
  return m.bytes();
}

Expected<std::unique_ptr<Session>> session_with(std::vector<std::string> disabled, int stop_after,
                                                OptimizationLevel level = OptimizationLevel::kBasic) {
  Config c;
  c.providers = {"reference"};
  c.optimization_level = level;
  c.disabled_passes = std::move(disabled);
  c.stop_after_pass = stop_after;
  return Session::create_from_bytes(testing::make_env(c), model());
}

int nodes_of(const Session& s, const std::string& op) {
  int n = 0;
  for (const auto& p : s.placement().nodes) n += p.op_type == op;
  return n;
}

void expect_correct(const Session& s) {
  auto out = s.run({{"x", testing::float_tensor({1, 2, 3}, {0, 1, 2, 3, 4, 5})}});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ(testing::values_of((*out)[0]), (std::vector<float>{3, 4, 5, 6, 7, 8}));
  EXPECT_EQ((*out)[0].dims(), (Dims{1, 6}));
}

TEST(PassManagerTest, BasicLevelFoldsBoth) {
  auto s = session_with({}, -1);
  ASSERT_TRUE(s.has_value()) << s.status().message();
  EXPECT_EQ(nodes_of(**s, "Shape"), 0);
  EXPECT_EQ(nodes_of(**s, "Add"), 1);
  expect_correct(**s);
}

TEST(PassManagerTest, DisabledLevelAndDisabledPassesKeepTheirNodes) {
  auto none = session_with({}, -1, OptimizationLevel::kDisabled);
  ASSERT_TRUE(none.has_value()) << none.status().message();
  EXPECT_EQ(nodes_of(**none, "Shape"), 1);
  EXPECT_EQ(nodes_of(**none, "Add"), 2);
  expect_correct(**none);
  auto no_reshape = session_with({"reshape_shape_folding"}, -1);
  ASSERT_TRUE(no_reshape.has_value()) << no_reshape.status().message();
  EXPECT_EQ(nodes_of(**no_reshape, "Shape"), 1);
  EXPECT_EQ(nodes_of(**no_reshape, "Add"), 1);
  expect_correct(**no_reshape);
}

TEST(PassManagerTest, StopAfterPassBisects) {
  // Pass runs are numbered in list order (lowerings unnumbered): stopping
  // after constant folding's first run folds the Add of constants, and the
  // Constant-free chain stays; nothing after it runs.
  int folding = 0;
  for (const auto& p : graph_passes()) {
    if (p.level == OptimizationLevel::kDisabled) continue;
    ++folding;
    if (p.name == "constant_folding") break;
  }
  auto first = session_with({}, folding);
  ASSERT_TRUE(first.has_value()) << first.status().message();
  EXPECT_EQ(nodes_of(**first, "Add"), 1);
  EXPECT_EQ(nodes_of(**first, "Shape"), 1);
  expect_correct(**first);
  auto zero = session_with({}, 0);
  ASSERT_TRUE(zero.has_value()) << zero.status().message();
  EXPECT_EQ(nodes_of(**zero, "Add"), 2);
  expect_correct(**zero);
}

TEST(PassManagerTest, UnknownDisabledPassIsAnErrorListingThePasses) {
  auto s = session_with({"no_such_pass"}, -1);
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.status().message().find("no_such_pass"), std::string::npos) << s.status().message();
  EXPECT_NE(s.status().message().find("reshape_shape_folding"), std::string::npos) << s.status().message();
}

TEST(PassManagerTest, EveryPassHasAUniqueName) {
  std::set<std::string> names;
  for (const auto& [name, level] : transform::pass_names()) EXPECT_TRUE(names.insert(name).second) << name;
  EXPECT_TRUE(names.count("constant_folding"));
}

}  // namespace
}  // namespace loom
