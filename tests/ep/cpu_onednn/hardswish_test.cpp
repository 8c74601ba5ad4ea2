// HardSwish as exporters write it (x * Clip(x + 3, 0, 6) / 6 and
// x * HardSigmoid(x)), which cpu_onednn rewrites into one eltwise_hardswish
// (fused into the convolution before it when it can). Every form, and the
// near-misses that must not be rewritten, against the reference EP.
#include "ep_compare.h"

namespace loom::ep_testing {
namespace {

enum class Form { kMulThenDiv, kDivThenMul, kMulBySixth, kSwappedOperands, kHardSigmoid, kHardSigmoidOtherAlpha };

// y = hardswish-like(x'), x' = Conv(x) when `conv`, else the input itself.
// `clip_out_is_output` makes an intermediate a graph output (no rewrite).
std::string model(Form form, bool conv, bool clip_out_is_output = false, int64_t clip_opset = 13) {
  testing::ModelBuilder m(clip_opset);
  m.input("x", kFloat, {1, 24, 7, 9});
  std::string x = "x";
  if (conv) {
    random_weights(m, "w", {24, 24, 3, 3}, 7, 24);
    add_ints_attr(m.node("Conv", {"x", "w"}, {"c"}), "pads", {1, 1, 1, 1});
    x = "c";
  }
  if (form == Form::kHardSigmoid || form == Form::kHardSigmoidOtherAlpha) {
    auto& h = m.node("HardSigmoid", {x}, {"h"});
    add_float_attr(h, "alpha", form == Form::kHardSigmoid ? 1.f / 6.f : 0.2f);
    add_float_attr(h, "beta", 0.5f);
    m.node("Mul", {x, "h"}, {"y"});
  } else {
    m.float_initializer("three", {}, {3.f});
    m.float_initializer("six", {}, {6.f});
    m.float_initializer("sixth", {1}, {1.f / 6.f});
    if (form == Form::kSwappedOperands) m.node("Add", {"three", x}, {"a"});
    else m.node("Add", {x, "three"}, {"a"});
    if (clip_opset < 11) {
      auto& c = m.node("Clip", {"a"}, {"cl"});
      add_float_attr(c, "min", 0.f);
      add_float_attr(c, "max", 6.f);
    } else {
      m.float_initializer("zero", {}, {0.f});
      m.node("Clip", {"a", "zero", "six"}, {"cl"});
    }
    switch (form) {
      case Form::kMulThenDiv:
        m.node("Mul", {x, "cl"}, {"p"});
        m.node("Div", {"p", "six"}, {"y"});
        break;
      case Form::kSwappedOperands:
        m.node("Mul", {"cl", x}, {"p"});
        m.node("Div", {"p", "six"}, {"y"});
        break;
      case Form::kDivThenMul:
        m.node("Div", {"cl", "six"}, {"p"});
        m.node("Mul", {x, "p"}, {"y"});
        break;
      default:
        m.node("Mul", {x, "cl"}, {"p"});
        m.node("Mul", {"sixth", "p"}, {"y"});
        break;
    }
  }
  m.output("y", kFloat, {});
  if (clip_out_is_output) m.output(form == Form::kHardSigmoid ? "h" : "cl", kFloat, {1, 24, 7, 9});
  return m.bytes();
}

const std::map<std::string, Tensor> inputs() {
  // Wide enough to reach both clip bounds (|x| > 3) before and after the conv.
  return {{"x", random_tensor({1, 24, 7, 9}, 11, -8.f, 8.f)}};
}

TEST(OnednnHardSwish, EveryExportedFormMatchesReference) {
  const std::vector<std::pair<Form, const char*>> forms = {
      {Form::kMulThenDiv, "mul then div"},       {Form::kDivThenMul, "div then mul"},
      {Form::kMulBySixth, "mul by 1/6"},         {Form::kSwappedOperands, "swapped operands"},
      {Form::kHardSigmoid, "x * HardSigmoid(x)"}, {Form::kHardSigmoidOtherAlpha, "HardSigmoid alpha 0.2 (no rewrite)"}};
  for (const auto& [form, name] : forms)
    for (bool conv : {false, true})
      expect_matches_reference(model(form, conv), inputs(), {}, std::string(name) + (conv ? " after conv" : ""));
}

TEST(OnednnHardSwish, ClipWithAttributeBounds) {
  expect_matches_reference(model(Form::kMulThenDiv, true, false, 10), inputs(), {}, "Clip-6 (opset 10)");
}

TEST(OnednnHardSwish, IntermediateThatIsAnOutputIsKept) {
  for (Form form : {Form::kMulThenDiv, Form::kHardSigmoid})
    for (bool conv : {false, true})
      expect_matches_reference(model(form, conv, true), inputs(), {}, conv ? "after conv" : "standalone");
}

}  // namespace
}  // namespace loom::ep_testing
