// Packed weights: once cpu_onednn has packed a weight it tells the host to
// free the original (kernel_release_constant_input). Later programs for new
// shapes rebuild from the packed copy, the original's bytes are gone although
// runs share the values they bind for constants, and the host keeps
// initializers that other steps still read.
#include "common/rss.h"
#include "ep_compare.h"

namespace loom::ep_testing {
namespace {

// y = Relu(x W + b) with a symbolic batch: W is packed (2-D weights).
std::string dense_model() {
  testing::ModelBuilder m;
  m.input("x", kFloat, {-1, 4, 32});
  random_weights(m, "w", {32, 48}, 1, 32);
  random_weights(m, "b", {48}, 2);
  m.node("MatMul", {"x", "w"}, {"h"});
  m.node("Add", {"h", "b"}, {"hb"});
  m.node("Relu", {"hb"}, {"y"});
  m.output("y", kFloat, {});
  return m.bytes();
}

TEST(OnednnConstantRelease, PackedWeightsAreReleasedAndNewShapesStillMatch) {
  const std::string model = dense_model();
  auto onednn = make_session(onednn_env(), model, profiled_options());
  auto reference = make_session(reference_env(), model);
  ASSERT_TRUE(onednn && reference);
  // Batch 2, then 3 (a new program, rebuilt from the packed copy), then 2 again.
  int batch_index = 0;
  for (int64_t batch : {2, 3, 2}) {
    const std::map<std::string, Tensor> in = {{"x", random_tensor({batch, 4, 32}, 10 + batch_index++)}};
    auto got = onednn->run(in);
    auto want = reference->run(in);
    ASSERT_TRUE(got.has_value()) << got.status().message();
    ASSERT_TRUE(want.has_value()) << want.status().message();
    expect_close((*want)[0], (*got)[0], {}, "batch " + std::to_string(batch));
  }
  EXPECT_EQ(parts_of(*onednn).released, std::vector<std::string>{"w"}) << "W is released once, when it is first packed";
}

TEST(OnednnConstantRelease, ReleasedWeightBytesAreFreed) {
  // A 32 MiB weight: after the first run packs it, the session holds the
  // packed copy alone. Were the original kept (by the value runs bind for it),
  // the resident set would grow by another 32 MiB.
  constexpr int64_t kRows = 2048, kCols = 4096;
  testing::ModelBuilder m;
  m.input("x", kFloat, {1, kRows});
  random_weights(m, "w", {kRows, kCols}, 3, kRows);
  m.node("MatMul", {"x", "w"}, {"y"});
  m.output("y", kFloat, {});
  std::string model = m.bytes();
  auto s = make_session(onednn_env(), model);
  model.clear();
  model.shrink_to_fit();
  ASSERT_TRUE(s);
  const std::map<std::string, Tensor> in = {{"x", random_tensor({1, kRows}, 8)}};
  const int64_t before = testing::rss_bytes();
  for (int run = 0; run < 3; ++run) ASSERT_TRUE(s->run(in).has_value()) << "run " << run;
  const double grown_mb = static_cast<double>(testing::rss_bytes() - before) / (1 << 20);
  // AddressSanitizer keeps freed memory in quarantine: no RSS drop to see.
  if (!testing::kAddressSanitizer) EXPECT_LT(grown_mb, 16.0) << "RSS grew " << grown_mb << " MiB over 3 runs";
}

TEST(OnednnConstantRelease, HostKeepsAnInitializerOtherStepsRead) {
  // W feeds the oneDNN MatMul and a TopK the reference EP runs (cpu_onednn
  // does not claim TopK); freeing W after packing would break the TopK.
  testing::ModelBuilder m;
  m.input("x", kFloat, {2, 32});
  random_weights(m, "w", {32, 48}, 1, 32);
  m.int64_initializer("k", {1}, {3});
  m.node("MatMul", {"x", "w"}, {"y"});
  m.node("TopK", {"w", "k"}, {"top", "idx"});
  m.output("y", kFloat, {});
  m.output("top", kFloat, {});
  Config c;
  c.providers = {"cpu_onednn", "reference"};
  c.optimization_level = OptimizationLevel::kDisabled;  // keep TopK(W) from being folded
  auto s = make_session(testing::make_env(c), m.bytes(), profiled_options());
  auto reference = make_session(reference_env(), m.bytes());
  ASSERT_TRUE(s && reference);
  const std::map<std::string, Tensor> in = {{"x", random_tensor({2, 32}, 5)}};
  for (int run = 0; run < 2; ++run) {
    auto got = s->run(in);
    auto want = reference->run(in);
    ASSERT_TRUE(got.has_value()) << got.status().message();
    ASSERT_TRUE(want.has_value()) << want.status().message();
    expect_close((*want)[0], (*got)[0], {}, "MatMul, run " + std::to_string(run));
    expect_close((*want)[1], (*got)[1], {}, "TopK of W, run " + std::to_string(run));
  }
  EXPECT_TRUE(parts_of(*s).released.empty()) << "the host keeps W for the TopK";
}

}  // namespace
}  // namespace loom::ep_testing
