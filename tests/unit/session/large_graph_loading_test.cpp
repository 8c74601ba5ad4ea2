// Loading a model and creating a session scale about linearly in the number
// of nodes: a long chain of cheap nodes and a wide fan of nodes reading one
// input, at sizes where a step quadratic in the node count (a scan of the
// graph per node or per fused partition, a rename of the whole graph per
// removed Identity, a cycle walk per claimed partition) took minutes. A hang
// guard, not a speed test: the bound is generous, and builds that run
// several times slower (sanitizers, no optimisation) use smaller graphs.
//
// A session for a 200,000-node graph takes tens of seconds even when every
// step is linear (ONNX's shape inference, two dozen graph passes), so
// sessions are built for tens of thousands of nodes here, and the passes that
// were quadratic on their own get 200,000-node graphs directly.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "common/model_builder.h"
#include "common/rss.h"
#include "common/test_env.h"
#include "ir/graph.h"
#include "memory/memory_planner.h"
#include "transform/passes/passes.h"

namespace loom {
namespace {

constexpr auto kFloat = ::onnx::TensorProto::FLOAT;

#if defined(__OPTIMIZE__)
constexpr bool kOptimized = true;
#else
constexpr bool kOptimized = false;
#endif
// Sizes are divided by this in builds that run several times slower.
constexpr int kSlowdown = testing::kAddressSanitizer || !kOptimized ? 4 : 1;
constexpr double kBoundSeconds = 60;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Loads `bytes` into a session with the default providers and optimisation
// level within the bound, runs it on x = [x_value] and returns y[0].
float create_and_run(const std::string& bytes, float x_value, const std::string& what) {
  const auto start = std::chrono::steady_clock::now();
  auto s = Session::create_from_bytes(testing::make_env(), bytes);
  const double took = seconds_since(start);
  EXPECT_LT(took, kBoundSeconds) << what << ": loading and creating the session took " << took << " s";
  EXPECT_TRUE(s) << what << ": " << s.status().message();
  if (!s) return NAN;
  auto out = (*s)->run({{"x", testing::float_tensor({1}, {x_value})}});
  EXPECT_TRUE(out) << what << ": " << out.status().message();
  return out ? testing::values_of((*out)[0])[0] : NAN;
}

// A chain x -> ... -> y cycling through Relu, Relu, Floor, Identity and
// Add of a constant: the Identity nodes are removed, and cpu_onednn claims
// each run of Add, Relu, Relu as a partition of its own (it leaves Floor to
// the reference EP).
TEST(LargeGraphLoadingTest, ChainLoadsInLinearTime) {
  const int n = 50000 / kSlowdown;
  const std::vector<std::string> ops = {"Relu", "Relu", "Floor", "Identity", "Add"};
  testing::ModelBuilder m;
  m.input("x", kFloat, {1});
  m.float_initializer("one", {1}, {1.f});
  std::string prev = "x";
  float want = 2.5f;
  for (int i = 0; i < n; ++i) {
    const std::string& op = ops[i % ops.size()];
    const std::string out = i + 1 == n ? "y" : "v" + std::to_string(i);
    if (op == "Add") m.node("Add", {prev, "one"}, {out});
    else m.node(op, {prev}, {out});
    want = op == "Relu" ? std::max(want, 0.f) : op == "Floor" ? std::floor(want) : op == "Add" ? want + 1 : want;
    prev = out;
  }
  m.output("y", kFloat, {1});
  EXPECT_EQ(create_and_run(m.bytes(), 2.5f, "chain"), want);
}

// `n` nodes reading x summed by Sum nodes of 64 inputs, level by level.
std::string fan_in_model(int n, bool identical) {
  testing::ModelBuilder m;
  m.input("x", kFloat, {1});
  m.float_initializer("c", {1}, {1.f});
  std::vector<std::string> level;
  for (int i = 0; i < n; ++i) {
    // Distinct: x + c_i with c_i = i; identical: x + c (one node once
    // common subexpressions are merged).
    std::string c = "c";
    if (!identical) {
      c = "c" + std::to_string(i);
      m.float_initializer(c, {1}, {static_cast<float>(i)});
    }
    level.push_back("a" + std::to_string(i));
    m.node("Add", {"x", c}, {level.back()});
  }
  for (int depth = 0; level.size() > 1; ++depth) {
    std::vector<std::string> next;
    for (size_t i = 0; i < level.size(); i += 64) {
      next.push_back("s" + std::to_string(depth) + "_" + std::to_string(i / 64));
      m.node("Sum", std::vector<std::string>(level.begin() + i, level.begin() + std::min(level.size(), i + 64)),
             {next.back()});
    }
    level = std::move(next);
  }
  m.node("Identity", {level[0]}, {"y"});
  m.output("y", kFloat, {1});
  return m.bytes();
}

// cpu_onednn makes a partition of nearly every Add (they share no value).
TEST(LargeGraphLoadingTest, WideGraphLoadsInLinearTime) {
  const int n = 20000 / kSlowdown;
  const double want = n + 0.5 * n * (n - 1);  // sums in float: compared within rounding
  EXPECT_NEAR(create_and_run(fan_in_model(n, false), 1.f, "wide graph"), want, 1e-5 * want);
}

TEST(LargeGraphLoadingTest, WideGraphOfIdenticalNodesLoadsInLinearTime) {
  const int n = 50000 / kSlowdown;
  EXPECT_EQ(create_and_run(fan_in_model(n, true), 1.f, "wide graph of identical nodes"), static_cast<float>(2 * n));
}

// The passes that were quadratic, on 200,000 nodes without the rest of a
// session: a chain of Identity nodes (each removal renamed a value in every
// node) and identical nodes (each merged node was looked up by a scan).
TEST(LargeGraphLoadingTest, IdentityChainIsRemovedInLinearTime) {
  const int n = 200000 / kSlowdown;
  ir::Graph g;
  g.inputs = {"x"};
  g.outputs = {"y"};
  for (int i = 0; i < n; ++i) {
    ir::Node node;
    node.op_type = "Identity";
    node.opset = 17;
    node.inputs = {i == 0 ? "x" : "v" + std::to_string(i - 1)};
    node.outputs = {i + 1 == n ? "y" : "v" + std::to_string(i)};
    g.add_node(std::move(node));
  }
  transform::PassContext ctx;
  bool changed = false;
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(transform::make_identity_elimination()->run(g, ctx, &changed).is_ok());
  EXPECT_LT(seconds_since(start), kBoundSeconds);
  EXPECT_TRUE(changed);
  // The last Identity stays: it names the graph output, and x is an input.
  ASSERT_EQ(g.nodes().size(), 1u);
  EXPECT_EQ(g.nodes()[0]->inputs, std::vector<std::string>{"x"});
  EXPECT_EQ(g.nodes()[0]->outputs, std::vector<std::string>{"y"});
}

TEST(LargeGraphLoadingTest, IdenticalNodesMergeInLinearTime) {
  const int n = 200000 / kSlowdown;
  ir::Graph g;
  g.opsets[""] = 17;
  g.inputs = {"x"};
  std::vector<std::string> outs;
  for (int i = 0; i < n; ++i) {
    ir::Node node;
    node.op_type = "Relu";
    node.opset = 17;
    node.inputs = {"x"};
    node.outputs = {"r" + std::to_string(i)};
    outs.push_back(node.outputs[0]);
    g.add_node(std::move(node));
  }
  ir::Node sum;
  sum.op_type = "Sum";
  sum.opset = 17;
  sum.inputs = outs;
  sum.outputs = {"y"};
  g.add_node(std::move(sum));
  g.outputs = {"y"};
  transform::PassContext ctx;
  bool changed = false;
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(transform::make_common_subexpression_elimination()->run(g, ctx, &changed).is_ok());
  EXPECT_LT(seconds_since(start), kBoundSeconds);
  EXPECT_TRUE(changed);
  ASSERT_EQ(g.nodes().size(), 2u);  // one Relu, read n times by the Sum
  EXPECT_EQ(g.nodes()[1]->inputs, std::vector<std::string>(n, "r0"));
}

// The memory planner's best fit with as many free blocks as buffers: a row
// of buffers, one made per step, every other one freed at once, then as many
// new buffers, each taking the first block that fits.
TEST(LargeGraphLoadingTest, MemoryPlanWithManyFreeBlocksIsLinear) {
  const int n = 200000 / kSlowdown;
  std::vector<memory::BufferRequest> requests;
  for (int i = 0; i < n; ++i) requests.push_back({64, i, i % 2 == 0 ? n : n + 2});
  for (int i = 0; i < n / 2; ++i) requests.push_back({64, n + 1, n + 1});
  const auto start = std::chrono::steady_clock::now();
  const memory::MemoryPlan plan = memory::plan_memory(requests);
  EXPECT_LT(seconds_since(start), kBoundSeconds);
  ASSERT_EQ(plan.offsets.size(), requests.size());
  EXPECT_EQ(plan.arena_bytes, int64_t{64} * n);  // the new buffers take the freed blocks
  for (size_t k = n; k < requests.size(); ++k) ASSERT_EQ(plan.offsets[k] % 128, 0) << k;
}

}  // namespace
}  // namespace loom
