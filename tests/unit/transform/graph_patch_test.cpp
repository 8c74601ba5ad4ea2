// GraphPatch: staged edits apply only when the resulting graph is well
// formed; a rejected patch leaves the graph untouched.
#include "transform/framework/graph_patch.h"

#include <gtest/gtest.h>

namespace loom::transform {
namespace {

ir::Node make(const std::string& op, std::vector<std::string> in, std::vector<std::string> out) {
  ir::Node n;
  n.name = op + "_" + out.front();
  n.op_type = op;
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  return n;
}

// x -> Neg -> a -> Relu -> y
ir::Graph chain() {
  ir::Graph g;
  g.inputs = {"x"};
  g.outputs = {"y"};
  g.add_node(make("Neg", {"x"}, {"a"}));
  g.add_node(make("Relu", {"a"}, {"y"}));
  return g;
}

std::vector<std::string> ops(const ir::Graph& g) {
  std::vector<std::string> out;
  auto order = g.topological_order();
  EXPECT_TRUE(order.has_value()) << order.status().message();
  if (order)
    for (const ir::Node* n : *order) out.push_back(n->op_type);
  return out;
}

TEST(GraphPatchTest, ReplacesANodeAtomically) {
  ir::Graph g = chain();
  GraphPatch p(g, "test");
  p.remove_node(g.nodes()[0]->id);
  p.remove_node(g.nodes()[1]->id);
  p.add_node(make("Abs", {"x"}, {"y"}));
  ASSERT_TRUE(p.commit().is_ok());
  EXPECT_EQ(ops(g), std::vector<std::string>{"Abs"});
}

TEST(GraphPatchTest, RejectsADanglingReadAndLeavesTheGraphAlone) {
  ir::Graph g = chain();
  GraphPatch p(g, "my_rewrite at 'Neg_a'");
  p.remove_node(g.nodes()[0]->id);  // Relu still reads a
  const Status st = p.commit();
  ASSERT_FALSE(st.is_ok());
  EXPECT_NE(st.message().find("my_rewrite at 'Neg_a'"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("'a'"), std::string::npos) << st.message();
  EXPECT_EQ(ops(g), (std::vector<std::string>{"Neg", "Relu"}));
}

TEST(GraphPatchTest, RejectsCyclesDuplicateProducersAndLostOutputs) {
  {
    ir::Graph g = chain();
    GraphPatch p(g, "t");
    p.set_input(g.nodes()[0]->id, 0, "y");  // Neg reads Relu's output: a cycle
    const Status st = p.commit();
    EXPECT_NE(st.message().find("cycle"), std::string::npos) << st.message();
    EXPECT_EQ(g.nodes()[0]->inputs[0], "x");
  }
  {
    ir::Graph g = chain();
    GraphPatch p(g, "t");
    p.add_node(make("Abs", {"x"}, {"a"}));
    EXPECT_NE(p.commit().message().find("two producers"), std::string::npos);
    EXPECT_EQ(g.nodes().size(), 2u);
  }
  {
    ir::Graph g = chain();
    GraphPatch p(g, "t");
    p.remove_node(g.nodes()[1]->id);
    EXPECT_NE(p.commit().message().find("graph output 'y'"), std::string::npos);
    EXPECT_EQ(g.nodes().size(), 2u);
  }
}

TEST(GraphPatchTest, ReplaceUsesKeepsGraphOutputNames) {
  ir::Graph g = chain();
  GraphPatch p(g, "t");
  // Drop the Relu: its consumers (the graph output) read `a` instead.
  p.remove_node(g.nodes()[1]->id);
  p.replace_uses("y", "a");
  ASSERT_TRUE(p.commit().is_ok());
  EXPECT_EQ(ops(g), (std::vector<std::string>{"Neg", "Identity"}));
  EXPECT_EQ(g.outputs, std::vector<std::string>{"y"});
}

TEST(GraphPatchTest, FreshNamesAndInitializers) {
  ir::Graph g = chain();
  GraphPatch p(g, "t");
  EXPECT_EQ(p.fresh_name("a"), "a_1");
  EXPECT_EQ(p.fresh_name("a"), "a_2");
  const std::string c = p.add_initializer("x", Tensor::from_vector<int64_t>(DType::kInt64, {2}, {3, 4}));
  EXPECT_EQ(c, "x_1");
  p.set_input(g.nodes()[1]->id, 0, c);
  ASSERT_TRUE(p.commit().is_ok());
  ASSERT_TRUE(g.is_initializer("x_1"));
  EXPECT_EQ(g.type_of("x_1")->to_string(), "int64[2]");
  EXPECT_TRUE(p.empty());
}

}  // namespace
}  // namespace loom::transform
