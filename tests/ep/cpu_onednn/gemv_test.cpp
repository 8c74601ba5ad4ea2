// Single-row products with a large constant matrix (a classifier's Gemm, a
// vector times a matrix) run as cpu_onednn's GEMV step (ops/gemv.h): results
// vs the reference EP, and which products take that path.
#include "ep_compare.h"

namespace loom::ep_testing {
namespace {

struct GemvCase {
  std::string what;
  std::string model;
  std::map<std::string, Tensor> inputs;
  bool expect_gemv;
};

// y = Gemm(a, b, c) with `a` of one row (one column when trans_a).
GemvCase gemm_case(const std::string& what, int64_t k, int64_t n, bool trans_a, bool trans_b, float alpha, float beta,
                   const std::vector<int64_t>& c_dims, bool expect_gemv, uint32_t seed) {
  testing::ModelBuilder m;
  const std::vector<int64_t> a = trans_a ? std::vector<int64_t>{k, 1} : std::vector<int64_t>{1, k};
  m.input("a", kFloat, a);
  random_weights(m, "b", trans_b ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n}, seed, k);
  std::vector<std::string> inputs = {"a", "b"};
  if (!c_dims.empty()) {
    random_weights(m, "c", c_dims, seed + 1);
    inputs.push_back("c");
  }
  auto& g = m.node("Gemm", inputs, {"y"});
  testing::add_int_attr(g, "transA", trans_a);
  testing::add_int_attr(g, "transB", trans_b);
  add_float_attr(g, "alpha", alpha);
  add_float_attr(g, "beta", beta);
  m.output("y", kFloat, {});
  return {what, m.bytes(), {{"a", random_tensor(a, seed + 2)}}, expect_gemv};
}

// y = MatMul(a, b) with a constant b of dims {k, n}.
GemvCase matmul_case(const std::string& what, const std::vector<int64_t>& a, int64_t k, int64_t n, bool expect_gemv,
                     uint32_t seed) {
  testing::ModelBuilder m;
  m.input("a", kFloat, a);
  random_weights(m, "b", {k, n}, seed, k);
  m.node("MatMul", {"a", "b"}, {"y"});
  m.output("y", kFloat, {});
  return {what, m.bytes(), {{"a", random_tensor(a, seed + 2)}}, expect_gemv};
}

TEST(OnednnGemv, SingleRowProductsMatchTheReference) {
  const std::vector<GemvCase> cases = {
      gemm_case("classifier (transB, per-column bias)", 1280, 1000, false, true, 1.f, 1.f, {1000}, true, 1),
      // K not a multiple of the vector width, N not of the row block.
      gemm_case("plain B, scalar C", 257, 301, false, false, 1.f, 1.f, {1}, true, 2),
      gemm_case("transA, alpha and beta, C of one row", 300, 259, true, false, 0.5f, 2.f, {1, 259}, true, 3),
      gemm_case("no C", 513, 130, false, true, 1.f, 1.f, {}, true, 4),
      matmul_case("vector times matrix", {513}, 513, 131, true, 5),
      matmul_case("one row under batch dims of one", {1, 1, 384}, 384, 200, true, 6),
      // Below kGemvMinWeights: oneDNN's matmul.
      gemm_case("small", 64, 32, false, true, 1.f, 1.f, {32}, false, 7),
      // Two rows: oneDNN's matmul.
      matmul_case("two rows", {2, 512}, 512, 256, false, 8),
  };
  for (const GemvCase& c : cases) {
    ProfiledParts parts;
    expect_matches_reference(c.model, c.inputs, {}, c.what, onednn_env(), &parts);
    EXPECT_EQ(parts.count("gemv"), c.expect_gemv ? 1u : 0u) << c.what;
  }
}

TEST(OnednnGemv, OneThreadAndAChainAfterIt) {
  // Gemm -> Relu: the GEMV step, then the Relu built on its own.
  testing::ModelBuilder m;
  m.input("a", kFloat, {1, 640});
  random_weights(m, "b", {500, 640}, 9, 640);
  random_weights(m, "c", {500}, 10);
  testing::add_int_attr(m.node("Gemm", {"a", "b", "c"}, {"g"}), "transB", 1);
  m.node("Relu", {"g"}, {"y"});
  m.output("y", kFloat, {});
  ProfiledParts parts;
  expect_matches_reference(m.bytes(), {{"a", random_tensor({1, 640}, 11)}}, {}, "gemm + relu on one thread",
                           environment({"cpu_onednn"}, FallbackPolicy::kDeny, 1), &parts);
  EXPECT_EQ(parts.count("gemv"), 1u);
  EXPECT_EQ(parts.count("eltwise"), 1u) << "the Relu, built on its own";
}

}  // namespace
}  // namespace loom::ep_testing
