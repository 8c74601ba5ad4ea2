// Whole partitions on cpu_onednn: multi-op graphs, placement, acyclic
// grouping around unsupported nodes, the per-shape program cache with
// dynamic shapes, and concurrent runs.
#include <thread>

#include "ep_compare.h"

namespace loom::ep_testing {
namespace {

// Conv -> BN -> Relu -> Conv -> Add(residual) -> Relu -> MaxPool, batch `n`
// (-1 for a symbolic batch).
std::string residual_block(int64_t n) {
  testing::ModelBuilder m;
  m.input("x", kFloat, {n, 8, 8, 8});
  random_weights(m, "w1", {8, 8, 3, 3}, 1, 72);
  random_weights(m, "w2", {8, 8, 3, 3}, 2, 72);
  random_weights(m, "b2", {8}, 3);
  random_weights(m, "scale", {8}, 4);
  random_weights(m, "bias", {8}, 5);
  random_weights(m, "mean", {8}, 6);
  m.float_initializer("var", {8}, random_values(8, 7, 0.5f, 2.f));
  add_ints_attr(m.node("Conv", {"x", "w1"}, {"c1"}), "pads", {1, 1, 1, 1});
  m.node("BatchNormalization", {"c1", "scale", "bias", "mean", "var"}, {"bn"});
  m.node("Relu", {"bn"}, {"r1"});
  add_ints_attr(m.node("Conv", {"r1", "w2", "b2"}, {"c2"}), "pads", {1, 1, 1, 1});
  m.node("Add", {"c2", "x"}, {"sum"});
  m.node("Relu", {"sum"}, {"r2"});
  auto& pool = m.node("MaxPool", {"r2"}, {"y"});
  add_ints_attr(pool, "kernel_shape", {2, 2});
  add_ints_attr(pool, "strides", {2, 2});
  m.output("y", kFloat, {});
  return m.bytes();
}

TEST(OnednnPartition, ResidualBlockIsOnePartitionMatchingReference) {
  auto s = make_session(onednn_env(), residual_block(2));
  ASSERT_TRUE(s);
  for (const auto& n : s->placement().nodes) {
    EXPECT_EQ(n.provider, "cpu_onednn") << n.node_name;
    EXPECT_NE(n.reason.find("oneDNN partition"), std::string::npos) << n.reason;
  }
  EXPECT_EQ(s->placement().providers.size(), 1u);
  expect_matches_reference(residual_block(2), {{"x", random_tensor({2, 8, 8, 8}, 1)}});
}

TEST(OnednnPartition, UnsupportedNodeInTheMiddleSplitsWithoutACycle) {
  // c feeds Floor (not claimed) and Add; Add also reads Floor's output. One
  // group {Conv, Add} would both feed and consume Floor.
  testing::ModelBuilder m;
  m.input("x", kFloat, {1, 4, 5, 5});
  random_weights(m, "w", {4, 4, 3, 3}, 1, 36);
  add_ints_attr(m.node("Conv", {"x", "w"}, {"c"}), "pads", {1, 1, 1, 1});
  m.node("Floor", {"c"}, {"f"});
  m.node("Add", {"c", "f"}, {"a"});
  m.node("Relu", {"a"}, {"y"});
  m.output("y", kFloat, {});
  auto env = environment({"cpu_onednn", "reference"}, FallbackPolicy::kAllow);
  auto s = make_session(env, m.bytes());
  ASSERT_TRUE(s);
  std::map<std::string, std::string> where;
  for (const auto& n : s->placement().nodes) where[n.op_type] = n.provider;
  EXPECT_EQ(where["Conv"], "cpu_onednn");
  EXPECT_EQ(where["Floor"], "reference");
  EXPECT_EQ(where["Add"], "cpu_onednn");  // in a second partition
  auto reference = make_session(reference_env(), m.bytes());
  const Tensor x = random_tensor({1, 4, 5, 5}, 2, -3.f, 3.f);
  auto got = s->run({{"x", x}});
  auto want = reference->run({{"x", x}});
  ASSERT_TRUE(got.has_value()) << got.status().message();
  ASSERT_TRUE(want.has_value()) << want.status().message();
  expect_close((*want)[0], (*got)[0], {}, "split partitions");
}

TEST(OnednnPartition, SymbolicBatchBuildsOneProgramPerShape) {
  auto s = make_session(onednn_env(), residual_block(-1), profiled_options());
  auto reference = make_session(reference_env(), residual_block(-1));
  ASSERT_TRUE(s && reference);
  for (int repeat = 0; repeat < 3; ++repeat)
    for (int64_t batch : {1, 3}) {
      const Tensor x = random_tensor({batch, 8, 8, 8}, static_cast<uint32_t>(batch * 10 + repeat));
      auto got = s->run({{"x", x}});
      auto want = reference->run({{"x", x}});
      ASSERT_TRUE(got.has_value()) << got.status().message();
      ASSERT_TRUE(want.has_value()) << want.status().message();
      expect_close((*want)[0], (*got)[0], {}, "batch " + std::to_string(batch));
    }
  const ProfiledParts parts = parts_of(*s);
  EXPECT_EQ(parts.count("build program"), 2u) << "one program per input shape, reused across runs";
  EXPECT_EQ(parts.count("build program: [1,8,8,8]"), 1u);
  EXPECT_EQ(parts.count("build program: [3,8,8,8]"), 1u);
}

TEST(OnednnPartition, ProgramCacheKeepsTheMostRecentShapes) {
  Config c;
  c.providers = {"cpu_onednn"};
  c.fallback = FallbackPolicy::kDeny;
  c.provider_options["cpu_onednn"]["program_cache_size"] = "2";
  auto s = make_session(testing::make_env(c), residual_block(-1), profiled_options());
  auto reference = make_session(reference_env(), residual_block(-1));
  ASSERT_TRUE(s && reference);
  auto run = [&](int64_t batch) {
    const Tensor x = random_tensor({batch, 8, 8, 8}, static_cast<uint32_t>(batch));
    auto got = s->run({{"x", x}});
    auto want = reference->run({{"x", x}});
    ASSERT_TRUE(got.has_value()) << got.status().message();
    ASSERT_TRUE(want.has_value()) << want.status().message();
    expect_close((*want)[0], (*got)[0], {}, "batch " + std::to_string(batch));
  };
  run(1);
  run(2);
  run(1);  // cached; 2 is now the least recently used
  EXPECT_EQ(parts_of(*s).count("build program"), 2u);
  run(3);  // drops 2
  run(1);  // still cached
  EXPECT_EQ(parts_of(*s).count("build program"), 3u);
  run(2);  // rebuilt (weights come back from the packed copy)
  const ProfiledParts parts = parts_of(*s);
  EXPECT_EQ(parts.count("build program"), 4u);
  EXPECT_EQ(parts.count("build program: [2,8,8,8]"), 2u);
}

TEST(OnednnPartition, ConcurrentRunsFromFourThreads) {
  auto s = make_session(onednn_env(), residual_block(-1));
  auto reference = make_session(reference_env(), residual_block(-1));
  ASSERT_TRUE(s && reference);
  constexpr int kThreads = 4, kRuns = 6;
  std::vector<Tensor> inputs, expected;
  for (int i = 0; i < kThreads * kRuns; ++i) {
    inputs.push_back(random_tensor({1 + i % 2, 8, 8, 8}, 300 + i));
    auto want = reference->run({{"x", inputs.back()}});
    ASSERT_TRUE(want.has_value()) << want.status().message();
    expected.push_back((*want)[0]);
  }
  std::vector<std::vector<std::string>> errors(kThreads);
  std::vector<std::vector<std::pair<int, Tensor>>> results(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRuns; ++r) {
        const int i = t * kRuns + r;
        auto got = s->run({{"x", inputs[i]}});
        if (!got.has_value()) errors[t].push_back(got.status().message());
        else results[t].emplace_back(i, (*got)[0]);
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    for (const auto& e : errors[t]) ADD_FAILURE() << "thread " << t << ": " << e;
    for (const auto& [i, out] : results[t]) expect_close(expected[i], out, {}, "run " + std::to_string(i));
  }
}

// A decline says what is really missing: an op cpu_onednn has no kernel
// for is named so whatever its types, and a known op with another element
// type names the value and its type.
TEST(OnednnPartition, DeclineReasonsNameWhatIsMissing) {
  testing::ModelBuilder m;
  m.input("x", kFloat, {2, 3});
  m.input("h", ::onnx::TensorProto::FLOAT16, {2, 3});
  m.node("Floor", {"x"}, {"f"}, "floor");
  m.node("Relu", {"h"}, {"r"}, "relu_half");
  m.output("f", kFloat, {});
  m.output("r", ::onnx::TensorProto::FLOAT16, {});
  auto s = make_session(environment({"cpu_onednn", "reference"}, FallbackPolicy::kAllow), m.bytes());
  ASSERT_TRUE(s);
  for (const auto& n : s->placement().nodes) {
    EXPECT_EQ(n.provider, "reference") << n.node_name;
    if (n.node_name == "floor") EXPECT_NE(n.reason.find("op not implemented by cpu_onednn"), std::string::npos) << n.reason;
    if (n.node_name == "relu_half")
      EXPECT_NE(n.reason.find("only float32 is compiled, input 0 is float16"), std::string::npos) << n.reason;
  }
}

// oneDNN has no empty memory: a node whose input is known to be empty is
// left to another provider at placement (it used to fail at run time).
TEST(OnednnPartition, EmptyInputsAreLeftToAnotherProvider) {
  testing::ModelBuilder m;
  m.input("x", kFloat, {2, 0, 3});
  m.node("Relu", {"x"}, {"y"}, "relu_empty");
  m.output("y", kFloat, {});
  auto s = make_session(environment({"cpu_onednn", "reference"}, FallbackPolicy::kAllow), m.bytes());
  ASSERT_TRUE(s);
  ASSERT_EQ(s->placement().nodes.size(), 1u);
  EXPECT_EQ(s->placement().nodes[0].provider, "reference");
  EXPECT_NE(s->placement().nodes[0].reason.find("empty (zero-sized)"), std::string::npos)
      << s->placement().nodes[0].reason;
  auto out = s->run({{"x", Tensor::zeros(DType::kFloat, {2, 0, 3}).value()}});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ((*out)[0].dims(), (Dims{2, 0, 3}));
}

TEST(OnednnPartition, BadOptionsAreClearErrors) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"intra_op_threads", "many"}, {"intra_op_threads", "-2"}, {"winograd", "maybe"}, {"program_cache_size", "0"},
      {"no_such_option", "1"}};
  for (const auto& [key, value] : bad) {
    Config c;
    c.providers = {"cpu_onednn"};
    c.fallback = FallbackPolicy::kDeny;  // a provider that fails to start is then an error
    c.provider_options["cpu_onednn"][key] = value;
    auto env = testing::make_env(c);
    ASSERT_TRUE(env);
    auto s = Session::create_from_bytes(env, residual_block(1));
    ASSERT_FALSE(s.has_value()) << key << "=" << value;
    EXPECT_NE(s.status().message().find(key), std::string::npos) << s.status().message();
  }
}

TEST(OnednnPartition, ShapeRejectedAtRunTimeNamesTheNode) {
  // Symbolic dims hide that the inner dimensions differ until the run.
  testing::ModelBuilder m;
  m.input("a", kFloat, {2, -1});
  m.input("b", kFloat, {-1, 3});
  m.node("MatMul", {"a", "b"}, {"y"}, "the_matmul");
  m.output("y", kFloat, {});
  auto s = make_session(onednn_env(), m.bytes());
  ASSERT_TRUE(s);
  auto out = s->run({{"a", random_tensor({2, 4}, 1)}, {"b", random_tensor({5, 3}, 2)}});
  ASSERT_FALSE(out.has_value());
  EXPECT_NE(out.status().message().find("the_matmul"), std::string::npos) << out.status().message();
}

}  // namespace
}  // namespace loom::ep_testing
