// 1x1 convolutions with 16k + 8 (or 16) output channels, with at most 64
// input channels and a multiple of 16 output channels (expansions), or on at
// most 256 pixels (small maps), as host steps (ops/narrow_pointwise.h):
// results vs the reference EP with bias,
// residual Adds (in place and read from elsewhere), clamps, tail rows and
// batches, on two threads and one, fed row band by row band by the
// depthwise step before them or reading its whole result; and the
// convolutions they must leave to oneDNN. The steps need AVX-512: on other
// CPUs every case expects them unbuilt.
#include "ep_compare.h"

namespace loom::ep_testing {
namespace {

struct NarrowCase {
  std::string what;
  std::vector<int64_t> x;  // N, C, H, W; C a multiple of 16 (a depthwise step makes the input channels-last)
  int64_t out_channels = 24;
  bool bias = true;
  // "" / "input" (a graph input, read where it is) / "internal" (another
  // 1x1 convolution's result that nothing else reads, itself a step: one of
  // the two accumulates the Add into the other's bytes)
  std::string residual;
  std::string activation;  // "" / "Relu" / "Clip" (0..6), after the Add
  int64_t stride = 1;
  bool channels_last_input = true;  // false: the 1x1 reads the plain graph input
  std::string step = "narrow";      // the step expected: "narrow", "expand", "small" or "" (left to oneDNN)
  // The depthwise result is also a graph output: the depthwise step writes
  // it whole and the 1x1 reads it (no row-fed step).
  bool depthwise_output = false;
};

std::string narrow_model(const NarrowCase& c) {
  testing::ModelBuilder m;
  const int64_t in = c.x[1], out = c.out_channels;
  m.input("x", kFloat, c.x);
  std::string src = "x";
  if (c.channels_last_input) depthwise_3x3(m, "x", src = "d", in, "wd", 3);
  random_weights(m, "w", {out, in, 1, 1}, 4, in);
  if (c.bias) random_weights(m, "b", {out}, 5);
  auto& conv = c.bias ? m.node("Conv", {src, "w", "b"}, {"c"}) : m.node("Conv", {src, "w"}, {"c"});
  if (c.stride != 1) add_ints_attr(conv, "strides", {c.stride, c.stride});
  const std::vector<int64_t> out_dims = {c.x[0], out, (c.x[2] - 1) / c.stride + 1, (c.x[3] - 1) / c.stride + 1};
  std::string y = "c";
  if (c.residual == "input") {
    m.input("r", kFloat, out_dims);
    m.node("Add", {"c", "r"}, {y = "a"});
  } else if (c.residual == "internal") {
    random_weights(m, "wr", {out, in, 1, 1}, 6, in);
    auto& side = m.node("Conv", {src, "wr"}, {"r"});
    if (c.stride != 1) add_ints_attr(side, "strides", {c.stride, c.stride});
    m.node("Add", {"r", "c"}, {y = "a"});
  }
  if (c.activation == "Clip") {
    m.float_initializer("lo", {}, {0.f});
    m.float_initializer("hi", {}, {6.f});
    m.node("Clip", {y, "lo", "hi"}, {"z"});
    y = "z";
  } else if (!c.activation.empty()) {
    m.node(c.activation, {y}, {"z"});
    y = "z";
  }
  m.node("Identity", {y}, {"y"});
  m.output("y", kFloat, {});
  if (c.depthwise_output) m.output("d", kFloat, c.x);  // pads 1, stride 1: the input's dims
  return m.bytes();
}

std::map<std::string, Tensor> narrow_inputs(const NarrowCase& c, uint32_t seed) {
  std::map<std::string, Tensor> inputs = {{"x", random_tensor(c.x, seed)}};
  if (c.residual == "input")
    inputs["r"] = random_tensor({c.x[0], c.out_channels, (c.x[2] - 1) / c.stride + 1, (c.x[3] - 1) / c.stride + 1},
                                seed + 1);
  return inputs;
}

bool cpu_has_the_step() { return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma"); }

// Steps of kind `step` the case builds.
uint64_t expected_steps(const NarrowCase& c, const std::string& step) {
  if (c.step != step || !cpu_has_the_step()) return 0;
  return c.residual == "internal" ? 2 : 1;
}

// Steps computing the depthwise convolution before them row band by row
// band: when the depthwise result has no other reader (the "internal"
// residual's convolution reads it too, and a graph output does). Expansions
// read their (narrow) input whole.
uint64_t expected_fed_steps(const NarrowCase& c) {
  return expected_steps(c, "narrow") > 0 && c.channels_last_input && c.residual != "internal" && !c.depthwise_output
             ? 1
             : 0;
}

void expect_step_counts(const NarrowCase& c, const ProfiledParts& parts) {
  EXPECT_EQ(parts.count("pointwise narrow"), expected_steps(c, "narrow")) << c.what;
  EXPECT_EQ(parts.count("pointwise expand"), expected_steps(c, "expand")) << c.what;
  EXPECT_EQ(parts.count("pointwise small-map"), expected_steps(c, "small")) << c.what;
  EXPECT_EQ(parts.count("pointwise narrow row-fed"), expected_fed_steps(c)) << c.what;
}

std::vector<NarrowCase> cases() {
  return {
      {"MobileNetV2's 96->24 at 56x56", {1, 96, 56, 56}},
      {"144->24 with the block's residual Add, in place", {1, 144, 28, 28}, 24, true, "internal"},
      {"40 channels, a residual input, then Clip", {1, 32, 12, 20}, 40, true, "input", "Clip"},
      {"8 channels, no bias, Relu, 35 pixels (tail rows)", {1, 16, 7, 5}, 8, false, "", "Relu"},
      {"batch of 2, Clip without a residual", {2, 32, 9, 11}, 24, true, "", "Clip"},
      {"a residual Add then Relu, in place, odd size", {1, 48, 13, 9}, 24, false, "internal", "Relu"},
      {"MobileNetV2's 32->16 at 112x112", {1, 32, 112, 112}, 16},
      {"16 channels, a residual input, Clip, tail rows", {1, 48, 5, 7}, 16, false, "input", "Clip"},
      {"depthwise result also an output", {1, 32, 10, 12}, 24, true, "", "", 1, true, "narrow", true},
      // Expansions: 6, 4, 3, 2 and 1 vectors of output channels a tile.
      {"MobileNetV2's 16->96 expansion with Clip", {1, 16, 56, 56}, 96, true, "", "Clip", 1, true, "expand"},
      {"64->128 with the residual Add, in place, Relu", {1, 64, 7, 9}, 128, true, "internal", "Relu", 1, true,
       "expand"},
      {"32->144, a residual input, Clip, tail rows", {1, 32, 9, 13}, 144, true, "input", "Clip", 1, true, "expand"},
      {"16->32 without bias, 35 pixels", {1, 16, 7, 5}, 32, false, "", "", 1, true, "expand"},
      {"48->80, batch of 2", {2, 48, 6, 5}, 80, true, "", "Relu", 1, true, "expand"},
      // Small maps: 3 and 2 vectors of output channels a chunk; threads split
      // the chunks up to 64 pixels, the rows beyond.
      {"MobileNetV2's 7x7 160->960 with Clip", {1, 160, 7, 7}, 960, true, "", "Clip", 1, true, "small"},
      {"960->160 with the residual Add, in place", {1, 960, 7, 7}, 160, true, "internal", "", 1, true, "small"},
      {"576->160, a residual input, then Clip", {1, 576, 7, 7}, 160, true, "input", "Clip", 1, true, "small"},
      {"96->96 on a batch of 2 of 5x6 (60 pixels, tail rows)", {2, 96, 5, 6}, 96, false, "", "Relu", 1, true,
       "small"},
      {"MobileNetV2's 14x14 96->576 with Clip", {1, 96, 14, 14}, 576, true, "", "Clip", 1, true, "small"},
      {"576->96 on 13x19 with the residual Add, in place", {1, 576, 13, 19}, 96, true, "internal", "", 1, true,
       "small"},
      // Left to oneDNN.
      {"257 pixels", {1, 96, 1, 257}, 96, true, "", "", 1, true, ""},
      {"7x7 with weights over 2 MB (1024->640)", {1, 1024, 7, 7}, 640, true, "", "", 1, true, ""},
      {"7x7 with 80 output channels (not a multiple of 32)", {1, 96, 7, 7}, 80, true, "", "", 1, true, ""},
      {"7x7 with a Sigmoid after it", {1, 96, 7, 7}, 96, true, "", "Sigmoid", 1, true, ""},
      {"32 channels from 96 on 17x17", {1, 96, 17, 17}, 32, true, "", "", 1, true, ""},
      {"stride 2", {1, 32, 14, 14}, 24, true, "", "", 2, true, ""},
      {"a plain (NCHW) input", {1, 32, 14, 14}, 24, true, "", "", 1, false, ""},
      {"an expansion with a Sigmoid after it (a post-op the step lacks)", {1, 16, 8, 8}, 96, true, "", "Sigmoid", 1,
       true, ""},
      {"an expansion whose weights exceed 256 KB", {1, 64, 4, 4}, 1040, true, "", "", 1, true, ""},
  };
}

TEST(OnednnNarrowPointwise, MatchesTheReference) {
  for (const NarrowCase& c : cases()) {
    ProfiledParts parts;
    expect_matches_reference(narrow_model(c), narrow_inputs(c, 17), {}, c.what, onednn_env(), &parts);
    expect_step_counts(c, parts);
  }
}

TEST(OnednnNarrowPointwise, OneThreadGivesTheSameResults) {
  for (const NarrowCase& c :
       {NarrowCase{"residual and Clip on one thread", {1, 32, 12, 20}, 24, true, "internal", "Clip"},
        NarrowCase{"fed by rows on one thread", {2, 16, 9, 13}, 16, true, "input", "Relu"},
        NarrowCase{"an expansion on one thread", {1, 16, 9, 13}, 96, true, "input", "Clip", 1, true, "expand"},
        NarrowCase{"a small map on one thread", {1, 320, 7, 7}, 1280, true, "", "Clip", 1, true, "small"}}) {
    ProfiledParts parts;
    expect_matches_reference(narrow_model(c), narrow_inputs(c, 5), {}, c.what,
                             environment({"cpu_onednn"}, FallbackPolicy::kDeny, 1), &parts);
    expect_step_counts(c, parts);
  }
}

}  // namespace
}  // namespace loom::ep_testing
