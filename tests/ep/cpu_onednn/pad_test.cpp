// Pad on cpu_onednn (a host step, ops/pad.cpp) against the reference EP:
// every mode, pads larger than the dim (reflect and wrap repeat), negative
// pads (crops), axes (opset 18), the attribute forms of opsets 2 and 1, a
// Pad between two convolutions, and what stays with the reference EP.
#include "ep_compare.h"

namespace loom::ep_testing {
namespace {

struct PadCase {
  std::vector<int64_t> x, pads, axes;
  std::string mode;
  float value = 0.f;
  int64_t opset = 18;
};

std::string pad_model(const PadCase& c) {
  testing::ModelBuilder m(c.opset);
  m.input("x", kFloat, c.x);
  if (c.opset >= 11) {
    int64_initializer(m, "pads", c.pads);
    std::vector<std::string> in = {"x", "pads"};
    if (c.value != 0.f) {
      m.float_initializer("value", {}, {c.value});
      in.push_back("value");
    }
    if (!c.axes.empty()) {
      if (in.size() == 2) in.push_back("");
      int64_initializer(m, "axes", c.axes);
      in.push_back("axes");
    }
    auto& p = m.node("Pad", in, {"y"});
    if (!c.mode.empty()) add_string_attr(p, "mode", c.mode);
  } else {
    auto& p = m.node("Pad", {"x"}, {"y"});
    add_ints_attr(p, c.opset < 2 ? "paddings" : "pads", c.pads);
    if (!c.mode.empty()) add_string_attr(p, "mode", c.mode);
    if (c.value != 0.f) add_float_attr(p, "value", c.value);
  }
  m.output("y", kFloat, {});
  return m.bytes();
}

TEST(OnednnPad, EveryModeMatchesReference) {
  const std::vector<PadCase> cases = {
      {{2, 3, 5, 7}, {0, 0, 1, 2, 0, 0, 3, 1}, {}, "constant", 0.f},
      {{2, 3, 5, 7}, {0, 1, 1, 2, 1, 0, 3, 1}, {}, "constant", -2.5f},
      {{2, 3, 5, 7}, {0, 0, 2, 3, 0, 0, 4, 6}, {}, "reflect"},  // past the dim: periodic
      {{2, 3, 5, 7}, {0, 0, 2, 3, 0, 0, 4, 6}, {}, "edge"},
      {{2, 3, 5, 7}, {0, 0, 6, 9, 0, 0, 7, 8}, {}, "wrap"},
      {{2, 3, 1, 7}, {0, 0, 2, 1, 0, 0, 2, 1}, {}, "reflect"},  // a dim of 1
      {{2, 3, 5, 7}, {0, 0, -1, 2, 0, 0, 3, -2}, {}, "constant", 1.f},  // crops
      {{4, 9}, {1, -2, 0, 3}, {}, "edge"},
      {{3, 4, 6}, {2, 1, 2, 3}, {-1, 1}, "reflect"},  // axes (opset 18)
      {{17}, {5, 4}, {}, "wrap"},
      {{2, 3, 5, 7}, {0, 0, 1, 1, 0, 0, 1, 1}, {}, "reflect", 0.f, 13},
      {{2, 3, 5, 7}, {0, 0, 1, 1, 0, 0, 1, 1}, {}, "constant", 3.f, 2},  // attribute form
      {{2, 3, 5, 7}, {0, 0, 2, 0, 0, 0, 0, 2}, {}, "", 0.f, 1},          // `paddings`
  };
  for (size_t i = 0; i < cases.size(); ++i)
    expect_matches_reference(pad_model(cases[i]), {{"x", random_tensor(cases[i].x, static_cast<uint32_t>(i) + 3)}},
                             {0, 0}, "case " + std::to_string(i) + " " + cases[i].mode);
}

TEST(OnednnPad, BetweenConvolutions) {
  // A reflect pad feeding a valid convolution, as style-transfer and
  // segmentation models write "same" padding.
  testing::ModelBuilder m(13);
  m.input("x", kFloat, {1, 8, 12, 10});
  random_weights(m, "w1", {8, 8, 3, 3}, 1, 72);
  random_weights(m, "w2", {8, 8, 3, 3}, 2, 72);
  add_ints_attr(m.node("Conv", {"x", "w1"}, {"c1"}), "pads", {1, 1, 1, 1});
  m.node("Relu", {"c1"}, {"r1"});
  int64_initializer(m, "pads", {0, 0, 1, 1, 0, 0, 1, 1});
  add_string_attr(m.node("Pad", {"r1", "pads"}, {"p"}), "mode", "reflect");
  m.node("Conv", {"p", "w2"}, {"y"});
  m.output("y", kFloat, {});
  expect_matches_reference(m.bytes(), {{"x", random_tensor({1, 8, 12, 10}, 5)}}, {}, "Conv -> Pad -> Conv");
}

TEST(OnednnPad, PadsKnownOnlyAtRunTimeStayWithTheReference) {
  testing::ModelBuilder m(13);
  m.input("x", kFloat, {2, 3});
  m.input("pads", ::onnx::TensorProto::INT64, {4});
  m.node("Pad", {"x", "pads"}, {"y"});
  m.output("y", kFloat, {});
  auto s = make_session(environment({"cpu_onednn", "reference"}, FallbackPolicy::kAllow), m.bytes());
  ASSERT_TRUE(s);
  const auto& placed = s->placement().nodes.at(0);
  EXPECT_EQ(placed.provider, "reference");
  EXPECT_NE(placed.reason.find("pads must be a constant"), std::string::npos) << placed.reason;
}

}  // namespace
}  // namespace loom::ep_testing
