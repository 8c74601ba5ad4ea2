// Residual adds fused as sum post-ops: the primitive accumulates into the
// residual's own bytes only when nothing else still needs them. Each case is
// compared with the reference EP; the unsafe ones must keep the copy.
#include "ep_compare.h"

namespace loom::ep_testing {
namespace {

// r = Conv_a(x) (an intermediate); y = Relu(Conv_b(r) + r), optionally with
// r also read after the Add (`late_reader`) or also a graph output.
std::string residual_model(bool late_reader, bool r_is_output, bool matmul = false) {
  testing::ModelBuilder m;
  if (matmul) {
    m.input("x", kFloat, {2, 5, 16});
    random_weights(m, "wa", {16, 16}, 1, 16);
    random_weights(m, "wb", {16, 16}, 2, 16);
    m.node("MatMul", {"x", "wa"}, {"r"});
    m.node("MatMul", {"r", "wb"}, {"c"});
  } else {
    m.input("x", kFloat, {1, 8, 6, 6});
    random_weights(m, "wa", {16, 8, 1, 1}, 1, 8);
    random_weights(m, "wb", {16, 16, 3, 3}, 2, 144);
    m.node("Conv", {"x", "wa"}, {"r"});
    add_ints_attr(m.node("Conv", {"r", "wb"}, {"c"}), "pads", {1, 1, 1, 1});
  }
  m.node("Add", {"c", "r"}, {"a"});
  m.node("Relu", {"a"}, {late_reader ? "h" : "y"});
  if (late_reader) m.node("Sub", {"h", "r"}, {"y"});  // reads r after the in-place candidate
  m.output("y", kFloat, {});
  if (r_is_output) m.output("r", kFloat, matmul ? std::vector<int64_t>{2, 5, 16} : std::vector<int64_t>{1, 16, 6, 6});
  return m.bytes();
}

TEST(OnednnResidual, SumPostOpMatchesReferenceWhetherInPlaceOrCopied) {
  for (bool matmul : {false, true})
    for (bool late_reader : {false, true})
      for (bool r_is_output : {false, true}) {
        const std::vector<int64_t> x = matmul ? std::vector<int64_t>{2, 5, 16} : std::vector<int64_t>{1, 8, 6, 6};
        expect_matches_reference(residual_model(late_reader, r_is_output, matmul), {{"x", random_tensor(x, 5)}}, {},
                                 std::string(matmul ? "matmul" : "conv") + (late_reader ? " late reader" : "") +
                                     (r_is_output ? " r output" : ""));
      }
}

TEST(OnednnResidual, RepeatedRunsReuseTheArenaCorrectly) {
  // In place, the residual's bytes are overwritten each run; a second run
  // must recompute them rather than read a stale sum.
  const std::string model = residual_model(false, false);
  auto onednn = make_session(onednn_env(), model);
  auto reference = make_session(reference_env(), model);
  ASSERT_TRUE(onednn && reference);
  for (uint32_t seed = 0; seed < 3; ++seed) {
    const std::map<std::string, Tensor> in = {{"x", random_tensor({1, 8, 6, 6}, 40 + seed)}};
    auto got = onednn->run(in);
    auto want = reference->run(in);
    ASSERT_TRUE(got.has_value() && want.has_value());
    expect_close((*want)[0], (*got)[0], {}, "run " + std::to_string(seed));
  }
}

}  // namespace
}  // namespace loom::ep_testing
