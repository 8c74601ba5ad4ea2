// Binary ops, binary post-ops and Concat whose operands come in different
// layouts: a convolution's output (blocked or channels-last, as oneDNN picks)
// next to plain partition inputs and constants of full or broadcast shape.
// cpu_onednn reorders operands to one layout; results must match the
// reference EP whichever operand the layout comes from.
#include "ep_compare.h"

namespace loom::ep_testing {
namespace {

// 24 channels: not a multiple of the 8/16 blocks, so blocked layouts pad.
const std::vector<int64_t> kShape = {1, 24, 6, 10};

using testing::add_int_attr;

// c = Conv(x) (layout chosen by oneDNN); y = op(c, p) or op(p, c), p a plain
// graph input of full shape (`p_first` puts it first).
std::string conv_then_binary(const std::string& op, bool p_first, bool relu_between = false) {
  testing::ModelBuilder m;
  m.input("x", kFloat, kShape);
  m.input("p", kFloat, kShape);
  random_weights(m, "w", {24, 24, 3, 3}, 3, 216);
  add_ints_attr(m.node("Conv", {"x", "w"}, {"c"}), "pads", {1, 1, 1, 1});
  std::string c = "c";
  if (relu_between) {
    m.node("Relu", {"c"}, {"r"});
    c = "r";
  }
  if (p_first) m.node(op, {"p", c}, {"y"});
  else m.node(op, {c, "p"}, {"y"});
  m.output("y", kFloat, {});
  return m.bytes();
}

std::map<std::string, Tensor> inputs() {
  // p away from zero so Div stays well conditioned.
  return {{"x", random_tensor(kShape, 1)}, {"p", random_tensor(kShape, 2, 0.5f, 2.f)}};
}

TEST(OnednnMixedLayout, ConvOutputWithPlainFullShapeInput) {
  for (const std::string op : {"Add", "Sub", "Mul", "Div", "Max", "Min"})
    for (bool p_first : {false, true})
      for (bool relu : {false, true}) {
        if (op == "Div" && p_first) continue;  // dividing by conv outputs near 0 is ill-conditioned
        expect_matches_reference(conv_then_binary(op, p_first, relu), inputs(), {},
                                 op + (p_first ? " plain first" : " conv first") + (relu ? " after relu" : ""));
      }
}

// c = Conv(x); then a chain of binaries with constants of each broadcast
// shape, fused as binary post-ops whose operands take the conv's layout.
TEST(OnednnMixedLayout, BroadcastConstantsAsPostOps) {
  const std::vector<std::vector<int64_t>> shapes = {{}, {1}, {24, 1, 1}, {1, 24, 1, 1}, {10}, {1, 1, 6, 10}, {1, 24, 6, 10}};
  for (const auto& s : shapes)
    for (const std::string op : {"Mul", "Add", "Sub", "Div"}) {
      testing::ModelBuilder m;
      m.input("x", kFloat, kShape);
      m.input("p", kFloat, kShape);
      random_weights(m, "w", {24, 24, 1, 1}, 4, 24);
      m.node("Conv", {"x", "w"}, {"c"});
      m.float_initializer("k", s, random_values(static_cast<size_t>(count(s)), 5, 0.5f, 2.f));
      m.node(op, {"c", "k"}, {"a"});
      m.node("Mul", {"a", "p"}, {"y"});  // and a plain full-shape input after it
      m.output("y", kFloat, {});
      std::string name = op + " by [";
      for (int64_t d : s) name += std::to_string(d) + ",";
      expect_matches_reference(m.bytes(), inputs(), {}, name + "]");
    }
}

// Two convolutions whose outputs oneDNN may lay out differently (a 1x1 and a
// depthwise 3x3), added, then multiplied by a plain input.
TEST(OnednnMixedLayout, TwoProducedLayoutsAndAPlainInput) {
  testing::ModelBuilder m;
  m.input("x", kFloat, kShape);
  m.input("p", kFloat, kShape);
  random_weights(m, "w1", {24, 24, 1, 1}, 6, 24);
  random_weights(m, "w2", {24, 1, 3, 3}, 7, 9);
  m.node("Conv", {"x", "w1"}, {"a"});
  auto& dw = m.node("Conv", {"x", "w2"}, {"b"});
  add_ints_attr(dw, "pads", {1, 1, 1, 1});
  add_int_attr(dw, "group", 24);
  m.node("Sub", {"b", "a"}, {"s"});
  m.node("Mul", {"p", "s"}, {"y"});
  m.output("y", kFloat, {});
  expect_matches_reference(m.bytes(), inputs(), {}, "two convs");
}

TEST(OnednnMixedLayout, ConcatOfConvOutputAndPlainInput) {
  testing::ModelBuilder m;
  m.input("x", kFloat, kShape);
  m.input("p", kFloat, kShape);
  random_weights(m, "w", {24, 24, 1, 1}, 8, 24);
  m.node("Conv", {"x", "w"}, {"c"});
  add_int_attr(m.node("Concat", {"p", "c", "p"}, {"y"}), "axis", 1);
  m.output("y", kFloat, {});
  expect_matches_reference(m.bytes(), inputs(), {}, "concat");
}

// ConvTranspose builds its trailing chain standalone (no post-ops); a
// one-channel result is blocked with padding, where oneDNN has only a
// reference eltwise, so the Sigmoid runs on plain data.
TEST(OnednnMixedLayout, ConvTransposeThenBiasAndSigmoid) {
  for (int64_t oc : {24, 1}) {
    testing::ModelBuilder m;
    m.input("x", kFloat, kShape);
    random_weights(m, "w", {24, oc, 2, 2}, 9, 24);
    m.float_initializer("bias", {oc, 1, 1}, random_values(static_cast<size_t>(oc), 10));
    add_ints_attr(m.node("ConvTranspose", {"x", "w"}, {"d"}), "strides", {2, 2});
    m.node("Add", {"d", "bias"}, {"a"});
    m.node("Sigmoid", {"a"}, {"y"});
    m.output("y", kFloat, {});
    expect_matches_reference(m.bytes(), {{"x", random_tensor(kShape, 11)}}, {}, "oc " + std::to_string(oc));
  }
}

}  // namespace
}  // namespace loom::ep_testing
