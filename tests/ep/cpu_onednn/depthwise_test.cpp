// Depthwise 3x3 convolutions run as cpu_onednn's depthwise step
// (ops/depthwise.h): results vs the reference EP across strides, pads, image
// sizes around the step's strip widths, batches and fused clamps, and which
// convolutions take that path.
#include "ep_compare.h"

namespace loom::ep_testing {
namespace {

struct DepthwiseCase {
  std::string what;
  std::vector<int64_t> x;  // N, C, H, W
  std::vector<int64_t> strides, pads, dilations;
  int64_t kernel = 3;
  bool bias = true;
  std::vector<std::string> after;  // activation nodes after the Conv
  uint64_t expect_steps = 1;
};

std::string depthwise_model(const DepthwiseCase& c) {
  testing::ModelBuilder m;
  const int64_t channels = c.x[1];
  m.input("x", kFloat, c.x);
  random_weights(m, "w", {channels, 1, c.kernel, c.kernel}, 3, c.kernel * c.kernel);
  if (c.bias) random_weights(m, "b", {channels}, 4);
  auto& n = c.bias ? m.node("Conv", {"x", "w", "b"}, {"t0"}) : m.node("Conv", {"x", "w"}, {"t0"});
  testing::add_int_attr(n, "group", channels);
  add_ints_attr(n, "strides", c.strides);
  add_ints_attr(n, "pads", c.pads);
  if (!c.dilations.empty()) add_ints_attr(n, "dilations", c.dilations);
  m.float_initializer("lo", {}, {-0.25f});
  m.float_initializer("hi", {}, {0.5f});
  std::string prev = "t0";
  for (size_t i = 0; i < c.after.size(); ++i) {
    const std::string out = "t" + std::to_string(i + 1);
    if (c.after[i] == "Clip") m.node("Clip", {prev, "lo", "hi"}, {out});
    else if (c.after[i] == "LeakyRelu") add_float_attr(m.node("LeakyRelu", {prev}, {out}), "alpha", 0.2f);
    else m.node(c.after[i], {prev}, {out});
    prev = out;
  }
  m.node("Identity", {prev}, {"y"});
  m.output("y", kFloat, {});
  return m.bytes();
}

std::vector<DepthwiseCase> cases() {
  const std::vector<int64_t> s1 = {1, 1}, s2 = {2, 2}, p1 = {1, 1, 1, 1};
  return {
      {"MobileNetV2-like, stride 1, Clip", {1, 32, 28, 28}, s1, p1, {}, 3, true, {"Clip"}},
      {"stride 2, Clip", {1, 96, 28, 28}, s2, p1, {}, 3, true, {"Clip"}},
      {"stride 2, odd size", {1, 48, 15, 13}, s2, p1, {}, 3, true, {"Relu"}},
      // Widths around the strips (8 outputs at stride 1, 6 at stride 2).
      {"width 1", {1, 16, 5, 1}, s1, p1, {}, 3, true, {}},
      {"width 3", {1, 16, 4, 3}, s1, p1, {}, 3, true, {}},
      {"width 10: one strip, no remainder", {1, 16, 3, 10}, s1, p1, {}, 3, true, {}},
      {"width 19: strips and a remainder", {1, 16, 3, 19}, s1, p1, {}, 3, true, {"Relu"}},
      {"width 29 at stride 2", {1, 16, 6, 29}, s2, p1, {}, 3, true, {}},
      {"7x7 map, many channels", {1, 160, 7, 7}, s1, p1, {}, 3, true, {"Clip"}},
      {"no padding", {1, 16, 9, 12}, s1, {0, 0, 0, 0}, {}, 3, true, {}},
      {"asymmetric pads", {1, 32, 10, 11}, s2, {1, 0, 2, 1}, {}, 3, true, {}},
      {"pads of 2", {1, 16, 6, 17}, s1, {2, 2, 2, 2}, {}, 3, true, {}},
      {"strides 2 down, 1 across", {1, 16, 9, 20}, {2, 1}, p1, {}, 3, true, {}},
      {"strides 1 down, 2 across", {1, 16, 9, 20}, {1, 2}, p1, {}, 3, true, {}},
      {"batch of 3, no bias", {3, 32, 12, 9}, s1, p1, {}, 3, false, {}},
      // Not for the step: oneDNN's convolution, with the chain as post-ops.
      {"Relu then Sigmoid (a chain longer than one clamp)", {1, 16, 8, 8}, s1, p1, {}, 3, true, {"Relu", "Sigmoid"}, 0},
      {"LeakyRelu after it (not a clamp)", {1, 16, 8, 8}, s1, p1, {}, 3, true, {"LeakyRelu"}, 0},
      {"24 channels (not a multiple of 16)", {1, 24, 8, 8}, s1, p1, {}, 3, true, {"Clip"}, 0},
      {"5x5 kernel", {1, 16, 9, 9}, s1, {2, 2, 2, 2}, {}, 5, true, {}, 0},
      {"dilated", {1, 16, 9, 9}, s1, {2, 2, 2, 2}, {2, 2}, 3, true, {}, 0},
      {"stride 3", {1, 16, 9, 9}, {3, 3}, p1, {}, 3, true, {}, 0},
  };
}

TEST(OnednnDepthwise, MatchesTheReference) {
  for (const DepthwiseCase& c : cases()) {
    ProfiledParts parts;
    expect_matches_reference(depthwise_model(c), {{"x", random_tensor(c.x, 21)}}, {}, c.what, onednn_env(), &parts);
    EXPECT_EQ(parts.count("depthwise"), c.expect_steps) << c.what;
  }
}

TEST(OnednnDepthwise, OneThreadGivesTheSameResults) {
  const DepthwiseCase c{"two images on one thread", {2, 64, 17, 17}, {2, 2}, {1, 1, 1, 1}, {}, 3, true, {"Clip"}};
  ProfiledParts parts;
  expect_matches_reference(depthwise_model(c), {{"x", random_tensor(c.x, 5)}}, {}, c.what,
                           environment({"cpu_onednn"}, FallbackPolicy::kDeny, 1), &parts);
  EXPECT_EQ(parts.count("depthwise"), 1u);
}

}  // namespace
}  // namespace loom::ep_testing
