// Mish on cpu_onednn: ONNX's Mish-18 and the x * Tanh(Softplus(x)) that
// earlier exports write, both as oneDNN's eltwise_mish. oneDNN's soft_relu
// alone loses all relative precision for very negative inputs (+5e-5 where
// the value is -2e-11), so the written-out chain was off there; these cases
// reach x = -30.
#include "ep_compare.h"

namespace loom::ep_testing {
namespace {

// -30 .. 8 in 64 steps: the far negative tail, where softplus underflows.
Tensor wide_input() {
  std::vector<float> v;
  for (int i = 0; i < 64; ++i) v.push_back(-30.f + 38.f * static_cast<float>(i) / 63.f);
  return testing::float_tensor({1, 64}, v);
}

// Absolute error stays under 1e-6 (eltwise_mish flushes values below 8e-7).
constexpr Tolerance kMishTol{1e-4, 1e-6};

TEST(OnednnMish, OpsetEighteenMish) {
  testing::ModelBuilder m(18);
  m.input("x", kFloat, {1, 64});
  m.node("Mish", {"x"}, {"y"});
  m.output("y", kFloat, {});
  expect_matches_reference(m.bytes(), {{"x", wide_input()}}, kMishTol, "Mish-18");
}

TEST(OnednnMish, WrittenOutChainBecomesOneMish) {
  for (const bool swapped : {false, true}) {
    testing::ModelBuilder m(17);
    m.input("x", kFloat, {1, 64});
    m.node("Softplus", {"x"}, {"s"});
    m.node("Tanh", {"s"}, {"t"});
    if (swapped) m.node("Mul", {"t", "x"}, {"y"});
    else m.node("Mul", {"x", "t"}, {"y"});
    m.output("y", kFloat, {});
    expect_matches_reference(m.bytes(), {{"x", wide_input()}}, kMishTol,
                             swapped ? "Tanh(Softplus(x)) * x" : "x * Tanh(Softplus(x))");
  }
  // After a convolution (the chain becomes its post-op), typical inputs.
  testing::ModelBuilder m(17);
  m.input("x", kFloat, {1, 8, 6, 6});
  random_weights(m, "w", {8, 8, 3, 3}, 5, 72);
  add_ints_attr(m.node("Conv", {"x", "w"}, {"c"}), "pads", {1, 1, 1, 1});
  m.node("Softplus", {"c"}, {"s"});
  m.node("Tanh", {"s"}, {"t"});
  m.node("Mul", {"c", "t"}, {"y"});
  m.output("y", kFloat, {});
  expect_matches_reference(m.bytes(), {{"x", random_tensor({1, 8, 6, 6}, 3, -3.f, 3.f)}}, {}, "Conv + Mish");
}

}  // namespace
}  // namespace loom::ep_testing
