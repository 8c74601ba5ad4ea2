// A 1x1 convolution feeding a depthwise 3x3 step band by band (ops/depthwise.h,
// build_banded), oneDNN's (from a plain input) or the expansion step's (from
// a channels-last one, ops/narrow_pointwise.h): results vs the reference EP
// across strides, pads, odd sizes, activations and thread counts, and the
// cases that must keep the whole map (small maps, batches, a map read by
// another node or returned).
#include <optional>

#include "ep_compare.h"

namespace loom::ep_testing {
namespace {

struct BandedCase {
  std::string what;
  std::vector<int64_t> x;  // N, C, H, W of the 1x1 convolution's input
  int64_t expanded = 64;   // its output channels (the depthwise step's)
  std::vector<int64_t> strides = {1, 1}, pads = {1, 1, 1, 1};
  bool expand_bias = true;
  std::string expand_activation = "Clip";  // after the 1x1 ("" for none)
  std::string depthwise_activation = "Clip";
  std::string also_reads_map;  // "" / "output" (the map is a graph output too) / "node" (another node reads it)
  uint64_t expect_banded = 1;
  // A depthwise convolution on x first, so the 1x1 reads a channels-last
  // map and is the expansion step (x's channels a multiple of 16).
  bool channels_last_input = false;
};

bool cpu_has_the_expansion_step() { return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma"); }

std::string banded_model(const BandedCase& c) {
  testing::ModelBuilder m;
  const int64_t in = c.x[1], ch = c.expanded;
  m.input("x", kFloat, c.x);
  m.float_initializer("lo", {}, {0.f});
  m.float_initializer("hi", {}, {6.f});
  std::string src = "x";
  if (c.channels_last_input) depthwise_3x3(m, "x", src = "x1", in, "wx", 11);
  random_weights(m, "we", {ch, in, 1, 1}, 7, in);
  if (c.expand_bias) random_weights(m, "be", {ch}, 8);
  c.expand_bias ? m.node("Conv", {src, "we", "be"}, {"e0"}) : m.node("Conv", {src, "we"}, {"e0"});
  std::string map = "e0";
  if (c.expand_activation == "Clip") m.node("Clip", {"e0", "lo", "hi"}, {map = "e1"});
  else if (!c.expand_activation.empty()) m.node(c.expand_activation, {"e0"}, {map = "e1"});
  random_weights(m, "wd", {ch, 1, 3, 3}, 9, 9);
  random_weights(m, "bd", {ch}, 10);
  auto& dw = m.node("Conv", {map, "wd", "bd"}, {"d0"});
  testing::add_int_attr(dw, "group", ch);
  add_ints_attr(dw, "strides", c.strides);
  add_ints_attr(dw, "pads", c.pads);
  std::string out = "d0";
  if (c.depthwise_activation == "Clip") m.node("Clip", {"d0", "lo", "hi"}, {out = "d1"});
  else if (!c.depthwise_activation.empty()) m.node(c.depthwise_activation, {"d0"}, {out = "d1"});
  m.node("Identity", {out}, {"y"});
  m.output("y", kFloat, {});
  if (c.also_reads_map == "output") m.output(map, kFloat, {c.x[0], ch, c.x[2], c.x[3]});
  if (c.also_reads_map == "node") {
    m.node("Sigmoid", {map}, {"s"});
    m.output("s", kFloat, {});
  }
  return m.bytes();
}

std::vector<BandedCase> cases() {
  return {
      // 112x112x96: 4.8 MB, the map MobileNetV2's second block expands to.
      {"MobileNetV2's 112x112 block, stride 2", {1, 16, 112, 112}, 96, {2, 2}},
      {"stride 1, odd width", {1, 8, 100, 131}, 64},
      {"stride 2, odd height, asymmetric pads", {1, 8, 101, 130}, 64, {2, 2}, {1, 0, 2, 1}},
      {"no padding, stride 2", {1, 8, 103, 128}, 64, {2, 2}, {0, 0, 0, 0}},
      {"pads of 2 and no activations", {1, 8, 100, 128}, 64, {1, 1}, {2, 2, 2, 2}, true, "", ""},
      {"strides 2 down, 1 across", {1, 8, 100, 128}, 64, {2, 1}},
      {"strides 1 down, 2 across", {1, 8, 100, 128}, 64, {1, 2}},
      {"1x1 without bias, Relu after each", {1, 16, 96, 96}, 96, {2, 2}, {1, 1, 1, 1}, false, "Relu", "Relu"},
      // The whole map is kept.
      {"a 1.8 MB map (below the banding threshold)", {1, 24, 56, 56}, 144, {1, 1}, {1, 1, 1, 1}, true, "Clip",
       "Clip", "", 0},
      {"batch of 2", {2, 8, 100, 128}, 64, {2, 2}, {1, 1, 1, 1}, true, "Clip", "Clip", "", 0},
      {"the map is also a graph output", {1, 8, 100, 128}, 64, {2, 2}, {1, 1, 1, 1}, true, "Clip", "Clip", "output",
       0},
      {"another node reads the map", {1, 8, 100, 128}, 64, {2, 2}, {1, 1, 1, 1}, true, "Clip", "Clip", "node", 0},
      // The expansion step computes the map's rows.
      {"expansion step: MobileNetV2's 112x112 block", {1, 16, 112, 112}, 96, {2, 2}, {1, 1, 1, 1}, true, "Clip",
       "Clip", "", 1, true},
      {"expansion step: stride 1, odd width, asymmetric pads", {1, 16, 100, 131}, 64, {1, 1}, {0, 1, 2, 1}, false,
       "Relu", "", "", 1, true},
      {"expansion step: a 1.8 MB map, whole", {1, 16, 56, 56}, 144, {1, 1}, {1, 1, 1, 1}, true, "Clip", "Clip", "", 0,
       true},
      {"expansion step: batch of 2, whole", {2, 16, 100, 128}, 64, {2, 2}, {1, 1, 1, 1}, true, "Clip", "Clip", "", 0,
       true},
  };
}

// Depthwise and expansion steps the case builds.
uint64_t expected_depthwise_steps(const BandedCase& c) { return c.channels_last_input ? 2 : 1; }
uint64_t expected_expansion_steps(const BandedCase& c) {
  return c.channels_last_input && cpu_has_the_expansion_step() ? 1 : 0;
}
// Banded steps the case builds, when known: on a CPU without the expansion
// step, oneDNN's 1x1 reads the channels-last map in the layout it picks, and
// only its nhwc choice makes it a band convolution.
std::optional<uint64_t> expected_banded(const BandedCase& c) {
  if (c.channels_last_input && !cpu_has_the_expansion_step()) return std::nullopt;
  return c.expect_banded;
}

TEST(OnednnBandedDepthwise, MatchesTheReference) {
  for (const BandedCase& c : cases()) {
    ProfiledParts parts;
    expect_matches_reference(banded_model(c), {{"x", random_tensor(c.x, 31)}}, {}, c.what, onednn_env(), &parts);
    if (const auto want = expected_banded(c)) EXPECT_EQ(parts.count("depthwise banded"), *want) << c.what;
    EXPECT_EQ(parts.count("depthwise"), expected_depthwise_steps(c)) << c.what;
    EXPECT_EQ(parts.count_with_fed("pointwise expand"), expected_expansion_steps(c)) << c.what;
  }
}

TEST(OnednnBandedDepthwise, OneThreadGivesTheSameResults) {
  for (const BandedCase& c :
       {BandedCase{"stride 2 on one thread", {1, 8, 101, 130}, 64, {2, 2}},
        BandedCase{"expansion step, stride 2 on one thread", {1, 16, 101, 130}, 64, {2, 2}, {1, 1, 1, 1}, true,
                   "Clip", "Clip", "", 1, true}}) {
    ProfiledParts parts;
    expect_matches_reference(banded_model(c), {{"x", random_tensor(c.x, 6)}}, {}, c.what,
                             environment({"cpu_onednn"}, FallbackPolicy::kDeny, 1), &parts);
    if (const auto want = expected_banded(c)) EXPECT_EQ(parts.count("depthwise banded"), *want) << c.what;
  }
}

}  // namespace
}  // namespace loom::ep_testing
