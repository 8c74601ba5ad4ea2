// The order build_plan runs its partitions in (exec/plan_order.h), on
// graphs and assignments made by hand.
#include "exec/plan_order.h"

#include <gtest/gtest.h>

namespace loom::exec {
namespace {

// A graph of named single-output nodes: each reads `inputs`, makes `name`.
class GraphMaker {
 public:
  ir::NodeId node(const std::string& name, std::vector<std::string> inputs) {
    ir::Node n;
    n.name = name;
    n.op_type = "Relu";
    n.inputs = std::move(inputs);
    n.outputs = {name};
    return graph.add_node(std::move(n)).id;
  }
  // Groups as lists of node ids, in the partitioner's order.
  partition::Assignment groups(const std::vector<std::vector<ir::NodeId>>& members) {
    partition::Assignment a;
    for (size_t g = 0; g < members.size(); ++g) {
      partition::Group group;
      group.nodes = members[g];
      group.fused = members[g].size() > 1;
      a.groups.push_back(group);
      for (ir::NodeId id : members[g]) a.group_of[id] = g;
    }
    return a;
  }
  ir::Graph graph;
};

TEST(PlanOrderTest, GroupsFollowTheirDependenciesThenTheModelsOrder) {
  GraphMaker m;
  m.graph.inputs = {"x"};
  const ir::NodeId a = m.node("a", {"x"}), b = m.node("b", {"x"}), c = m.node("c", {"a", "b"}),
                   d = m.node("d", {"c"});
  m.graph.outputs = {"d", "b"};
  // Listed out of order: d's group first, then c, then the two roots.
  auto order = order_groups(m.graph, m.groups({{d}, {c}, {b}, {a}}));
  ASSERT_TRUE(order.has_value()) << order.status().message();
  EXPECT_EQ(order->groups, (std::vector<size_t>{3, 2, 1, 0})) << "a, b (the model's order), then c, then d";
  EXPECT_EQ(order->position.at(a), 0u);
  EXPECT_EQ(order->position.at(d), 3u);
  EXPECT_EQ(order->readers.at("x"), (std::vector<ir::NodeId>{a, b}));
  EXPECT_EQ(order->readers.at("c"), (std::vector<ir::NodeId>{d}));
  EXPECT_EQ(order->graph_outputs, (std::unordered_set<std::string>{"d", "b"}));
}

TEST(PlanOrderTest, AFusedGroupRunsOnceEverythingItReadsIsMade) {
  GraphMaker m;
  m.graph.inputs = {"x"};
  const ir::NodeId a = m.node("a", {"x"}), b = m.node("b", {"a"}), c = m.node("c", {"x"}), d = m.node("d", {"b", "c"});
  m.graph.outputs = {"d"};
  // {a, b, d} fused; c alone feeds d, so c runs first although the fused
  // group holds the model's first node.
  auto order = order_groups(m.graph, m.groups({{a, b, d}, {c}}));
  ASSERT_TRUE(order.has_value()) << order.status().message();
  EXPECT_EQ(order->groups, (std::vector<size_t>{1, 0}));
}

TEST(PlanOrderTest, GroupsThatNeedEachOtherAreACycle) {
  GraphMaker m;
  m.graph.inputs = {"x"};
  const ir::NodeId a = m.node("a", {"x"}), b = m.node("b", {"a"}), c = m.node("c", {"b"});
  m.graph.outputs = {"c"};
  auto order = order_groups(m.graph, m.groups({{a, c}, {b}}));
  ASSERT_FALSE(order.has_value());
  EXPECT_NE(order.status().message().find("cycle"), std::string::npos) << order.status().message();
}

TEST(PlanOrderTest, ANodeInNoPartitionIsAnErrorNotACrash) {
  GraphMaker m;
  m.graph.inputs = {"x"};
  const ir::NodeId a = m.node("a", {"x"});
  m.node("b", {"a"});
  m.graph.outputs = {"b"};
  auto order = order_groups(m.graph, m.groups({{a}}));
  ASSERT_FALSE(order.has_value());
  EXPECT_NE(order.status().message().find("in no partition"), std::string::npos) << order.status().message();
}

}  // namespace
}  // namespace loom::exec
