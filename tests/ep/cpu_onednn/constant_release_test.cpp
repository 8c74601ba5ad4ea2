// Packed weights: once cpu_onednn has packed a weight it tells the host to
// free the original: at session creation when the shapes are fixed
// (graph_release_constant_input, while compiling), else on the first run
// (kernel_release_constant_input). Later programs for new shapes rebuild
// from the packed copy, the original's bytes are gone although runs share
// the values they bind for constants, and the host keeps initializers that
// other steps still read, that a run may override, or that the graph
// outputs.
#include "common/rss.h"
#include "ep_compare.h"

namespace loom::ep_testing {
namespace {

// y = Relu(x W + b), x [batch, 4, 32]: W is packed (2-D weights). With a
// symbolic batch (-1) on the first run, with a fixed one when the session is
// created. W may also be a graph input (a run may override it) or output.
std::string dense_model(int64_t batch, bool w_is_graph_input = false, bool w_is_graph_output = false) {
  testing::ModelBuilder m;
  m.input("x", kFloat, {batch, 4, 32});
  if (w_is_graph_input) m.input("w", kFloat, {32, 48});
  random_weights(m, "w", {32, 48}, 1, 32);
  random_weights(m, "b", {48}, 2);
  m.node("MatMul", {"x", "w"}, {"h"});
  m.node("Add", {"h", "b"}, {"hb"});
  m.node("Relu", {"hb"}, {"y"});
  m.output("y", kFloat, {});
  if (w_is_graph_output) m.output("w", kFloat, {32, 48});
  return m.bytes();
}

TEST(OnednnConstantRelease, PackedWeightsAreReleasedAndNewShapesStillMatch) {
  const std::string model = dense_model(-1);
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

// y = x W with W 2048 x 4096 (32 MiB); x's batch -1 is symbolic.
constexpr int64_t kRows = 2048, kCols = 4096;
std::string big_matmul_model(int64_t batch) {
  testing::ModelBuilder m;
  m.input("x", kFloat, {batch, kRows});
  random_weights(m, "w", {kRows, kCols}, 3, kRows);
  m.node("MatMul", {"x", "w"}, {"y"});
  m.output("y", kFloat, {});
  return m.bytes();
}

TEST(OnednnConstantRelease, ReleasedWeightBytesAreFreed) {
  // A 32 MiB weight, its batch symbolic: after the first run packs it, the
  // session holds the packed copy alone. Were the original kept (by the value
  // runs bind for it), the resident set would grow by another 32 MiB.
  std::string model = big_matmul_model(-1);
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
  const ProfiledParts parts = parts_of(*s);
  EXPECT_TRUE(parts.released.empty()) << "the host keeps W for the TopK";
  EXPECT_TRUE(parts.packed_at_creation.empty()) << "the host keeps W for the TopK";
}

TEST(OnednnConstantRelease, FixedShapesArePackedWhenTheSessionIsCreated) {
  const std::string model = dense_model(2);
  auto onednn = make_session(onednn_env(), model, profiled_options());
  auto reference = make_session(reference_env(), model);
  ASSERT_TRUE(onednn && reference);
  for (uint32_t run = 0; run < 2; ++run) {
    const std::map<std::string, Tensor> in = {{"x", random_tensor({2, 4, 32}, 20 + run)}};
    auto got = onednn->run(in);
    auto want = reference->run(in);
    ASSERT_TRUE(got.has_value()) << got.status().message();
    ASSERT_TRUE(want.has_value()) << want.status().message();
    expect_close((*want)[0], (*got)[0], {}, "run " + std::to_string(run));
  }
  const ProfiledParts parts = parts_of(*onednn);
  EXPECT_EQ(parts.packed_at_creation, std::vector<std::string>{"w"});
  EXPECT_TRUE(parts.released.empty()) << "nothing is left to release at run time";
  EXPECT_EQ(parts.count("build program"), 0u) << "the first run builds nothing";
  EXPECT_GT(parts.count("matmul"), 0u) << "the runs ran the program built at creation";
}

TEST(OnednnConstantRelease, AnInitializerARunMayOverrideIsKept) {
  const std::string model = dense_model(2, /*w_is_graph_input=*/true);
  auto onednn = make_session(onednn_env(), model, profiled_options());
  auto reference = make_session(reference_env(), model);
  ASSERT_TRUE(onednn && reference);
  const Tensor x = random_tensor({2, 4, 32}, 30);
  for (const bool override_w : {false, true}) {
    std::map<std::string, Tensor> in = {{"x", x}};
    if (override_w) in["w"] = random_tensor({32, 48}, 31);
    auto got = onednn->run(in);
    auto want = reference->run(in);
    ASSERT_TRUE(got.has_value()) << got.status().message();
    ASSERT_TRUE(want.has_value()) << want.status().message();
    expect_close((*want)[0], (*got)[0], {}, override_w ? "w given by the run" : "w from the model");
  }
  EXPECT_TRUE(parts_of(*onednn).packed_at_creation.empty());
}

TEST(OnednnConstantRelease, AnInitializerTheGraphOutputsIsKept) {
  const std::string model = dense_model(2, false, /*w_is_graph_output=*/true);
  auto onednn = make_session(onednn_env(), model, profiled_options());
  auto reference = make_session(reference_env(), model);
  ASSERT_TRUE(onednn && reference);
  const std::map<std::string, Tensor> in = {{"x", random_tensor({2, 4, 32}, 40)}};
  auto got = onednn->run(in);
  auto want = reference->run(in);
  ASSERT_TRUE(got.has_value()) << got.status().message();
  ASSERT_TRUE(want.has_value()) << want.status().message();
  ASSERT_EQ(got->size(), 2u);
  expect_close((*want)[0], (*got)[0], {}, "y");
  expect_close((*want)[1], (*got)[1], {}, "w, output as it is");
  EXPECT_TRUE(parts_of(*onednn).packed_at_creation.empty());
}

TEST(OnednnConstantRelease, WeightsPackedAtCreationAreNotHeldTwice) {
  // A 32 MiB weight packed while the session is created: the session then
  // holds the packed copy alone, not the original too.
  const std::string model = big_matmul_model(1);
  const int64_t before = testing::rss_bytes();
  auto s = make_session(onednn_env(), model);
  ASSERT_TRUE(s);
  const double grown_mb = static_cast<double>(testing::rss_bytes() - before) / (1 << 20);
  // AddressSanitizer keeps freed memory in quarantine: no RSS drop to see.
  if (!testing::kAddressSanitizer) EXPECT_LT(grown_mb, 48.0) << "creating the session grew RSS by " << grown_mb << " MiB";
  ASSERT_TRUE(s->run({{"x", random_tensor({1, kRows}, 9)}}).has_value());
}

}  // namespace
}  // namespace loom::ep_testing
