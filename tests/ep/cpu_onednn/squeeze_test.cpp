// Squeeze, Unsqueeze and Identity on cpu_onednn vs the reference EP: views
// of their input's bytes (like Reshape), so a sequence model's Squeeze no
// longer splits its partition. Axes as attributes (before opset 13) and as
// constant inputs, negative, and Squeeze without axes.
#include "ep_compare.h"

namespace loom::ep_testing {
namespace {

struct SqueezeCase {
  std::string what;
  std::string op;
  int opset;
  std::vector<int64_t> x;
  std::vector<int64_t> axes;  // empty: none given
};

std::string squeeze_model(const SqueezeCase& c) {
  testing::ModelBuilder m(c.opset);
  m.input("x", kFloat, c.x);
  m.node("Relu", {"x"}, {"r"});
  std::vector<std::string> in = {"r"};
  if (c.opset >= 13 && !c.axes.empty()) {
    int64_initializer(m, "axes", c.axes);
    in.push_back("axes");
  }
  auto& n = m.node(c.op, in, {"s"});
  if (c.opset < 13 && !c.axes.empty()) add_ints_attr(n, "axes", c.axes);
  m.node("Sigmoid", {"s"}, {"y"});
  m.output("y", kFloat, {});
  return m.bytes();
}

TEST(OnednnSqueeze, MatchesTheReference) {
  const std::vector<SqueezeCase> cases = {
      {"PP-OCR's height 1", "Squeeze", 11, {1, 64, 1, 40}, {2}},
      {"axes as an input, negative", "Squeeze", 13, {2, 1, 5, 1}, {-1, 1}},
      {"no axes: every 1", "Squeeze", 13, {1, 3, 1, 4}, {}},
      {"Unsqueeze attribute", "Unsqueeze", 11, {3, 4}, {0, 3}},
      {"Unsqueeze input, negative", "Unsqueeze", 13, {3, 4}, {-1}},
      {"Identity", "Identity", 13, {2, 3}, {}},
  };
  for (const SqueezeCase& c : cases)
    expect_matches_reference(squeeze_model(c), {{"x", random_tensor(c.x, 71, -1.f, 1.f)}}, {}, c.what);
}

TEST(OnednnSqueeze, ASqueezedAxisThatIsNotOneFailsNamingIt) {
  // Claimed with an unknown dim; a run where it is 3 cannot squeeze it.
  const SqueezeCase c{"unknown dim", "Squeeze", 13, {2, -1}, {1}};
  auto s = make_session(onednn_env(), squeeze_model(c));
  ASSERT_TRUE(s);
  auto got = s->run({{"x", random_tensor({2, 3}, 73)}});
  ASSERT_FALSE(got.has_value());
  EXPECT_NE(got.status().message().find("has size 3"), std::string::npos) << got.status().message();
}

}  // namespace
}  // namespace loom::ep_testing
