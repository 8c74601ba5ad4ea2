#include "ir/graph.h"

#include <gtest/gtest.h>

namespace loom::ir {
namespace {

Node make(const std::string& op, std::vector<std::string> in, std::vector<std::string> out) {
  Node n;
  n.name = op + "_" + out.front();
  n.op_type = op;
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  return n;
}

TEST(GraphTest, TopologicalOrderFollowsDependenciesNotListOrder) {
  Graph g;
  g.inputs = {"x"};
  g.outputs = {"z"};
  g.add_node(make("Relu", {"y"}, {"z"}));
  g.add_node(make("Neg", {"x"}, {"y"}));
  auto order = g.topological_order();
  ASSERT_TRUE(order.has_value()) << order.status().message();
  ASSERT_EQ(order->size(), 2u);
  EXPECT_EQ((*order)[0]->op_type, "Neg");
  EXPECT_EQ((*order)[1]->op_type, "Relu");
}

TEST(GraphTest, CycleIsRefusedNamingANode) {
  Graph g;
  g.inputs = {"x"};
  g.add_node(make("Add", {"x", "b"}, {"a"}));
  g.add_node(make("Neg", {"a"}, {"b"}));
  auto order = g.topological_order();
  ASSERT_FALSE(order.has_value());
  EXPECT_NE(order.status().message().find("cycle"), std::string::npos);
}

TEST(GraphTest, UndefinedInputIsRefusedNamingTheValue) {
  Graph g;
  g.inputs = {"x"};
  g.add_node(make("Add", {"x", "nowhere"}, {"a"}));
  auto order = g.topological_order();
  ASSERT_FALSE(order.has_value());
  EXPECT_NE(order.status().message().find("nowhere"), std::string::npos);
}

TEST(GraphTest, RemoveNodesKeepsOtherIds) {
  Graph g;
  NodeId a = g.add_node(make("Neg", {"x"}, {"y"})).id;
  NodeId b = g.add_node(make("Neg", {"y"}, {"z"})).id;
  g.remove_nodes({a});
  ASSERT_EQ(g.nodes().size(), 1u);
  EXPECT_EQ(g.nodes()[0]->id, b);
  EXPECT_EQ(g.find_node(a), nullptr);
}

TEST(GraphTest, OuterScopeReferencesOfSubgraph) {
  Graph body;
  body.inputs = {"i"};
  body.outputs = {"o"};
  body.add_node(make("Add", {"i", "outer"}, {"o"}));
  EXPECT_EQ(body.outer_scope_references(), std::set<std::string>{"outer"});
}

// A subgraph may read an outer value that an enclosing graph's node
// produces even when no type was recorded for it (an earlier If's output:
// the ONNX 1.23 AffineGrid function bodies do this).
TEST(GraphTest, SubgraphReadsUntypedOuterNodeOutput) {
  Graph outer;
  outer.inputs = {"x"};
  outer.add_node(make("Neg", {"x"}, {"n"}));  // "n" has no value_types entry
  Graph body;
  body.parent = &outer;
  body.outputs = {"o"};
  body.add_node(make("Identity", {"n"}, {"o"}));
  ASSERT_TRUE(body.topological_order().has_value()) << body.topological_order().status().message();
  Graph stray;
  stray.parent = &outer;
  stray.outputs = {"o"};
  stray.add_node(make("Identity", {"nowhere"}, {"o"}));
  auto order = stray.topological_order();
  ASSERT_FALSE(order.has_value());
  EXPECT_NE(order.status().message().find("nowhere"), std::string::npos);
}

}  // namespace
}  // namespace loom::ir
