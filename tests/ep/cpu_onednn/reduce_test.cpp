// ReduceMean / Sum / Max / Min / L2 on cpu_onednn vs the reference EP: axes
// as attributes and as constant inputs, negative, all, keepdims either way.
#include "ep_compare.h"

namespace loom::ep_testing {
namespace {

struct ReduceCase {
  std::string op;
  int opset;
  std::vector<int64_t> x;
  std::vector<int64_t> axes;  // empty: none given
  int64_t keepdims = 1;
};

std::string reduce_model(const ReduceCase& c) {
  testing::ModelBuilder m(c.opset);
  m.input("x", kFloat, c.x);
  // A Relu first, so the reduction also runs inside a partition.
  m.node("Relu", {"x"}, {"r"});
  const bool axes_input = c.opset >= 18 || (c.op == "ReduceSum" && c.opset >= 13);
  std::vector<std::string> inputs = {"r"};
  if (axes_input && !c.axes.empty()) {
    int64_initializer(m, "axes", c.axes);
    inputs.push_back("axes");
  }
  auto& n = m.node(c.op, inputs, {"y"});
  if (!axes_input && !c.axes.empty()) add_ints_attr(n, "axes", c.axes);
  testing::add_int_attr(n, "keepdims", c.keepdims);
  m.output("y", kFloat, {});
  return m.bytes();
}

TEST(OnednnReduce, MatchesTheReference) {
  const std::vector<ReduceCase> cases = {
      {"ReduceMean", 13, {2, 8, 5, 7}, {2, 3}},      // squeeze-and-excitation
      {"ReduceMean", 18, {2, 8, 5, 7}, {-1}},        // axes as an input
      {"ReduceMean", 13, {3, 4, 16}, {-1}, 0},
      {"ReduceSum", 13, {2, 6, 9}, {1}, 0},          // axes as an input from 13
      {"ReduceSum", 11, {2, 6, 9}, {0, 2}},
      {"ReduceMax", 13, {4, 5, 6}, {-1}},
      {"ReduceMin", 13, {4, 5, 6}, {}, 0},           // every dim: a scalar
      {"ReduceL2", 13, {2, 3, 10}, {1}},
      {"ReduceMean", 13, {7}, {0}, 0},
  };
  for (const ReduceCase& c : cases) {
    const std::string what = c.op + "-" + std::to_string(c.opset) + " over " + std::to_string(c.axes.size()) +
                             " axes, keepdims " + std::to_string(c.keepdims);
    ProfiledParts parts;
    expect_matches_reference(reduce_model(c), {{"x", random_tensor(c.x, 41, -1.f, 3.f)}}, {1e-5, 1e-5}, what,
                             onednn_env(), &parts);
    EXPECT_EQ(parts.count("reduction"), 1u) << what;
  }
}

TEST(OnednnReduce, NoopWithEmptyAxesStaysOnTheReference) {
  ReduceCase c{"ReduceMean", 18, {2, 3}, {}};
  testing::ModelBuilder m(18);
  m.input("x", kFloat, {2, 3});
  testing::add_int_attr(m.node("ReduceMean", {"x"}, {"y"}), "noop_with_empty_axes", 1);
  m.output("y", kFloat, {});
  auto s = make_session(environment({"cpu_onednn", "reference"}, FallbackPolicy::kAllow), m.bytes());
  ASSERT_TRUE(s);
  for (const auto& n : s->placement().nodes) {
    EXPECT_EQ(n.provider, "reference");
    EXPECT_NE(n.reason.find("noop_with_empty_axes"), std::string::npos) << n.reason;
  }
}

}  // namespace
}  // namespace loom::ep_testing
