// GELU as torch exports it, x * 0.5 * (1 + Erf(x / sqrt(2))): the core's
// gelu_fusion makes it one com.microsoft Gelu where cpu_onednn runs the
// nodes, and cpu_onednn computes that as eltwise_gelu_erf, a post-op of the
// MatMul before it. Every operand order, and a near-miss that must not be
// rewritten (cpu_onednn claims no Erf, so it stays unclaimed).
#include "ep_compare.h"

namespace loom::ep_testing {
namespace {

enum class Form { kHalfLast, kHalfOfSum, kHalfFirst, kMulByInvSqrt2, kSwapped, kNearMiss };

std::string model(Form form, bool matmul) {
  testing::ModelBuilder m(14);
  m.input("x", kFloat, {2, 16, 32});
  std::string x = "x";
  if (matmul) {
    random_weights(m, "w", {32, 32}, 5, 32);
    m.node("MatMul", {"x", "w"}, {"mm"});
    x = "mm";
  }
  m.float_initializer("sqrt2", {}, {form == Form::kNearMiss ? 1.5f : 1.4142135381698608f});
  m.float_initializer("inv_sqrt2", {}, {0.7071067690849304f});
  m.float_initializer("one", {}, {1.f});
  m.float_initializer("half", {}, {0.5f});
  if (form == Form::kMulByInvSqrt2) m.node("Mul", {"inv_sqrt2", x}, {"d"});
  else m.node("Div", {x, "sqrt2"}, {"d"});
  m.node("Erf", {"d"}, {"e"});
  if (form == Form::kSwapped) m.node("Add", {"one", "e"}, {"a"});
  else m.node("Add", {"e", "one"}, {"a"});
  switch (form) {
    case Form::kHalfOfSum:
      m.node("Mul", {"a", "half"}, {"p"});
      m.node("Mul", {x, "p"}, {"y"});
      break;
    case Form::kHalfFirst:
      m.node("Mul", {x, "half"}, {"h"});
      m.node("Mul", {"h", "a"}, {"y"});
      break;
    case Form::kSwapped:
      m.node("Mul", {"a", x}, {"p"});
      m.node("Mul", {"half", "p"}, {"y"});
      break;
    default:
      m.node("Mul", {x, "a"}, {"p"});
      m.node("Mul", {"p", "half"}, {"y"});
      break;
  }
  m.output("y", kFloat, {});
  return m.bytes();
}

TEST(OnednnGelu, EveryExportedFormMatchesReference) {
  const std::vector<std::pair<Form, const char*>> forms = {
      {Form::kHalfLast, "(x * (1 + e)) * 0.5"},  {Form::kHalfOfSum, "x * ((1 + e) * 0.5)"},
      {Form::kHalfFirst, "(x * 0.5) * (1 + e)"}, {Form::kMulByInvSqrt2, "x * (1 / sqrt 2)"},
      {Form::kSwapped, "swapped operands"}};
  const std::map<std::string, Tensor> in = {{"x", random_tensor({2, 16, 32}, 3, -4.f, 4.f)}};
  for (const auto& [form, name] : forms)
    for (bool matmul : {false, true}) {
      const std::string what = std::string(name) + (matmul ? " after MatMul" : "");
      ProfiledParts parts;
      expect_matches_reference(model(form, matmul), in, {}, what, onednn_env(), &parts);
      // One step: the GELU alone, or the MatMul with the GELU as its post-op.
      EXPECT_EQ(parts.count(matmul ? "matmul" : "eltwise"), 1u) << what;
      EXPECT_EQ(parts.count("eltwise") + parts.count("matmul") + parts.count("binary"), 1u) << what;
    }
}

// x / 1.5 instead of x / sqrt(2) is not GELU: it must not be rewritten, so
// its Erf stays unclaimed (with fallback 'deny' the session is refused).
TEST(OnednnGelu, NearMissIsNotRewritten) {
  for (bool matmul : {false, true}) {
    auto s = Session::create_from_bytes(onednn_env(), model(Form::kNearMiss, matmul));
    ASSERT_FALSE(s.has_value()) << (matmul ? "after MatMul" : "standalone");
    EXPECT_NE(s.status().message().find("Erf"), std::string::npos) << s.status().message();
  }
}

}  // namespace
}  // namespace loom::ep_testing
