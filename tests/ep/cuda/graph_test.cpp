// enable_cuda_graph on a GPU: the second run with given shapes is captured
// as a CUDA graph and later runs replay it. Every run, with new input
// values each time, must match the reference EP; a dynamic batch replays
// per shape it was captured for and runs step by step for the others; and
// concurrent runs (replays beside step-by-step runs) stay right. The
// recording protocol itself is tested on the CPU (tests/unit/exec/
// run_recorder_test.cpp); the option's parsing in virtual_device_test.cpp.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "ep/cuda/cuda_compare.h"

namespace loom {
namespace {

using namespace cuda_testing;

std::shared_ptr<Environment> graph_env() {
  static auto env = [] {
    Config c;
    c.providers = {"cuda"};
    c.fallback = FallbackPolicy::kDeny;
    c.provider_options["cuda"] = {{"enable_cuda_graph", "1"}};
    return testing::make_env(c);
  }();
  return env;
}

// x [batch, 8, 12, 12] -> Conv 3x3 (+B) -> Relu -> GlobalAveragePool ->
// Flatten -> Gemm (+C) -> Softmax -> y [batch, 10]: a classifier in small.
std::string classifier(int64_t batch) {
  testing::ModelBuilder m;
  m.input("x", kFloat, {batch, 8, 12, 12});
  const Tensor w = random_tensor(DType::kFloat, {16, 8, 3, 3}, 1, -0.3f, 0.3f);
  const Tensor b = random_tensor(DType::kFloat, {16}, 2);
  const Tensor w2 = random_tensor(DType::kFloat, {10, 16}, 3);
  const Tensor b2 = random_tensor(DType::kFloat, {10}, 4);
  auto values = [](const Tensor& t) {
    return std::vector<float>(t.data_as<float>(), t.data_as<float>() + t.element_count());
  };
  m.float_initializer("w", {16, 8, 3, 3}, values(w));
  m.float_initializer("b", {16}, values(b));
  m.float_initializer("w2", {10, 16}, values(w2));
  m.float_initializer("b2", {10}, values(b2));
  auto& conv = m.node("Conv", {"x", "w", "b"}, {"c"}, "conv");
  testing::add_ints_attr(conv, "pads", {1, 1, 1, 1});
  m.node("Relu", {"c"}, {"r"}, "relu");
  m.node("GlobalAveragePool", {"r"}, {"p"}, "pool");
  m.node("Flatten", {"p"}, {"f"}, "flatten");
  auto& gemm = m.node("Gemm", {"f", "w2", "b2"}, {"g"}, "gemm");
  testing::add_int_attr(gemm, "transB", 1);
  m.node("Softmax", {"g"}, {"y"}, "softmax");
  m.output("y", kFloat, {batch, 10});
  return m.bytes();
}

void expect_runs_match(Session& graph, Session& reference, int64_t batch, uint32_t seed, const std::string& what) {
  const Tensor x = random_tensor(DType::kFloat, {batch, 8, 12, 12}, seed);
  auto g = graph.run({{"x", x}});
  auto r = reference.run({{"x", x}});
  ASSERT_TRUE(g.has_value()) << what << ": " << g.status().message();
  ASSERT_TRUE(r.has_value()) << what;
  expect_close((*r)[0], (*g)[0], Tolerance{1e-4, 1e-5}, what);
}

TEST(CudaGraph, ReplaysMatchTheReferenceForNewInputs) {
  LOOM_SKIP_WITHOUT_GPU();
  for (int64_t batch : {int64_t{2}, int64_t{-1}}) {
    auto graph = make_session(graph_env(), classifier(batch));
    auto reference = make_session(reference_env(), classifier(batch));
    ASSERT_TRUE(graph && reference);
    const int64_t n = batch < 0 ? 3 : batch;
    for (uint32_t run = 0; run < 6; ++run)
      expect_runs_match(*graph, *reference, n, 10 + run,
                        "batch " + std::to_string(batch) + ", run " + std::to_string(run));
    if (batch < 0)  // other shapes: step by step, then their own recording is not made
      for (int64_t other : {int64_t{1}, int64_t{5}, int64_t{3}})
        expect_runs_match(*graph, *reference, other, 40 + static_cast<uint32_t>(other),
                          "dynamic batch " + std::to_string(other));
  }
}

TEST(CudaGraph, ConcurrentRunsStayRight) {
  LOOM_SKIP_WITHOUT_GPU();
  auto graph = make_session(graph_env(), classifier(2));
  auto reference = make_session(reference_env(), classifier(2));
  ASSERT_TRUE(graph && reference);
  std::vector<Tensor> inputs, expected;
  for (uint32_t i = 0; i < 8; ++i) {
    inputs.push_back(random_tensor(DType::kFloat, {2, 8, 12, 12}, 100 + i));
    auto r = reference->run({{"x", inputs.back()}});
    ASSERT_TRUE(r.has_value());
    expected.push_back((*r)[0]);
  }
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        const size_t k = static_cast<size_t>(t * 50 + i) % inputs.size();
        auto out = graph->run({{"x", inputs[k]}});
        if (!out.has_value()) {
          ++wrong;
          continue;
        }
        for (int64_t e = 0; e < expected[k].element_count(); ++e)
          if (std::fabs(element((*out)[0], e) - element(expected[k], e)) > 1e-4) {
            ++wrong;
            break;
          }
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace loom
