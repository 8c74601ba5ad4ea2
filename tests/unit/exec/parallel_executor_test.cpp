// The parallel executor: independent branches run at the same time on the
// inter-op pool, results are identical to sequential runs, and failures,
// cancels and asynchronous streams behave as in sequential runs.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "common/model_builder.h"
#include "common/cpu_time.h"
#include "common/test_env.h"
#include "exec/thread_pool.h"

namespace loom {
namespace {

using testing::float_tensor;
using testing::values_of;

// x -> four branches (Relu -> MatMul w_i -> Tanh -> Add) -> Sum -> y.
std::string branches_model(const std::string& relu_op = "Relu") {
  testing::ModelBuilder m;
  m.input("x", ::onnx::TensorProto::FLOAT, {8, 16});
  std::vector<std::string> ends;
  for (int b = 0; b < 4; ++b) {
    const std::string i = std::to_string(b);
    std::vector<float> w(16 * 16);
    for (size_t k = 0; k < w.size(); ++k) w[k] = 0.01f * static_cast<float>((k * (b + 3)) % 17) - 0.08f;
    m.float_initializer("w" + i, {16, 16}, w);
    m.node(relu_op, {"x"}, {"r" + i}, "relu" + i);
    m.node("MatMul", {"r" + i, "w" + i}, {"m" + i}, "matmul" + i);
    m.node("Tanh", {"m" + i}, {"t" + i}, "tanh" + i);
    m.node("Add", {"t" + i, "m" + i}, {"a" + i}, "add" + i);
    ends.push_back("a" + i);
  }
  m.node("Sum", ends, {"y"}, "sum");
  m.output("y", ::onnx::TensorProto::FLOAT, {8, 16});
  return m.bytes();
}

Tensor input() {
  std::vector<float> x(8 * 16);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 13) % 29) * 0.1f - 1.4f;
  return float_tensor({8, 16}, x);
}

std::unique_ptr<Session> make_session(Config config, const std::string& model, const std::string& plugins = "") {
  config.optimization_level = OptimizationLevel::kDisabled;
  auto env = testing::make_env(config, plugins);
  auto s = Session::create_from_bytes(env, model);
  EXPECT_TRUE(s.has_value()) << s.status().message();
  return s.has_value() ? std::move(*s) : nullptr;
}

Config parallel_config(std::vector<std::string> providers) {
  Config c;
  c.providers = std::move(providers);
  c.execution_mode = ExecutionMode::kParallel;
  c.inter_op_threads = 2;
  return c;
}

TEST(ParallelExecutorTest, ResultsAreIdenticalToSequential) {
  Config sequential;
  sequential.providers = {"reference"};
  auto seq = make_session(sequential, branches_model());
  auto par = make_session(parallel_config({"reference"}), branches_model());
  ASSERT_TRUE(seq && par);
  auto expected = seq->run({{"x", input()}});
  ASSERT_TRUE(expected.has_value()) << expected.status().message();
  for (int i = 0; i < 50; ++i) {
    auto got = par->run({{"x", input()}});
    ASSERT_TRUE(got.has_value()) << got.status().message();
    ASSERT_EQ(values_of((*got)[0]), values_of((*expected)[0])) << "run " << i;
  }
}

TEST(ParallelExecutorTest, IndependentBranchesOverlap) {
  auto par = make_session(parallel_config({"test_overlap", "reference"}), branches_model(), "device");
  ASSERT_TRUE(par);
  auto max_in_flight = testing::plugin_symbol<int (*)()>(
      testing::test_plugin_dir("device") + "/libloom_test_device_ep.so", "loom_test_overlap_max_in_flight");
  ASSERT_NE(max_in_flight, nullptr);
  auto got = par->run({{"x", input()}});
  ASSERT_TRUE(got.has_value()) << got.status().message();
  // Four 20 ms Relus on two workers plus the calling thread: at least two at once.
  EXPECT_GE(max_in_flight(), 2);
}

TEST(ParallelExecutorTest, ConcurrentParallelRunsAreBitIdentical) {
  auto par = make_session(parallel_config({"reference"}), branches_model());
  ASSERT_TRUE(par);
  auto expected = par->run({{"x", input()}});
  ASSERT_TRUE(expected.has_value()) << expected.status().message();
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        auto got = par->run({{"x", input()}});
        if (!got.has_value() || values_of((*got)[0]) != values_of((*expected)[0])) ++mismatches;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(ParallelExecutorTest, FailingStepEndsTheRunWithItsError) {
  // Reshape to a runtime shape that does not fit: the node fails at run time.
  testing::ModelBuilder m;
  m.input("x", ::onnx::TensorProto::FLOAT, {8, 16});
  m.input("shape", ::onnx::TensorProto::INT64, {2});
  m.node("Relu", {"x"}, {"a"}, "relu_a");
  m.node("Relu", {"x"}, {"b"}, "relu_b");
  m.node("Reshape", {"a", "shape"}, {"c"}, "bad_reshape");
  m.node("Sigmoid", {"b"}, {"d"}, "sigmoid");
  m.output("c", ::onnx::TensorProto::FLOAT, {});
  m.output("d", ::onnx::TensorProto::FLOAT, {8, 16});
  auto par = make_session(parallel_config({"reference"}), m.bytes());
  ASSERT_TRUE(par);
  auto bad = par->run({{"x", input()}, {"shape", Tensor::from_vector(DType::kInt64, {2}, std::vector<int64_t>{7, 7})}});
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.status().message().find("bad_reshape"), std::string::npos) << bad.status().message();
  auto good = par->run({{"x", input()}, {"shape", Tensor::from_vector(DType::kInt64, {2}, std::vector<int64_t>{16, 8})}});
  EXPECT_TRUE(good.has_value()) << good.status().message();
}

TEST(ParallelExecutorTest, CancelledRunStopsCleanly) {
  auto par = make_session(parallel_config({"test_overlap", "reference"}), branches_model(), "device");
  ASSERT_TRUE(par);
  RunOptions options;
  options.cancel = std::make_shared<CancelToken>();
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    options.cancel->cancel();
  });
  auto got = par->run({{"x", input()}}, {}, options);
  canceller.join();
  ASSERT_FALSE(got.has_value());
  EXPECT_EQ(got.status().code(), StatusCode::kCancelled) << got.status().message();
}

TEST(ParallelExecutorTest, AsyncStreamsInParallelModeMatchReference) {
  Config only_reference;
  only_reference.providers = {"reference"};
  auto reference = make_session(only_reference, branches_model());
  Config c = parallel_config({"test_async", "reference"});
  auto par = make_session(c, branches_model(), "async");
  ASSERT_TRUE(reference && par);
  EXPECT_NE(par->describe_plan().find("test_async (asynchronous)"), std::string::npos);
  auto expected = reference->run({{"x", input()}});
  ASSERT_TRUE(expected.has_value());
  for (int i = 0; i < 10; ++i) {
    auto got = par->run({{"x", input()}});
    ASSERT_TRUE(got.has_value()) << got.status().message();
    ASSERT_EQ(values_of((*got)[0]), values_of((*expected)[0]));
  }
}


TEST(ParallelExecutorTest, AnIdleParallelSessionUsesAlmostNoCpu) {
  auto par = make_session(parallel_config({"reference"}), branches_model());
  ASSERT_TRUE(par);
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(par->run({{"x", input()}}).has_value());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the workers' bounded spin (2 ms) ends
  const double before = testing::process_cpu_ms();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const double used = testing::process_cpu_ms() - before;
  // ~0 %: allow 2 % of one core for timer ticks and the test harness.
  EXPECT_LT(used, 10.0) << "the idle process used " << used << " ms of CPU in 500 ms";
}

TEST(ParallelExecutorTest, SharedPoolServesEverySessionOfTheEnvironment) {
  Config c = parallel_config({"reference"});
  c.shared_inter_op = true;
  c.optimization_level = OptimizationLevel::kDisabled;
  auto env = testing::make_env(c);
  ASSERT_TRUE(env);
  auto pool = env->shared_inter_op_pool();
  ASSERT_NE(pool, nullptr);
  EXPECT_EQ(pool, env->shared_inter_op_pool());
  EXPECT_EQ(pool->size(), 2);
  auto a = Session::create_from_bytes(env, branches_model());
  auto b = Session::create_from_bytes(env, branches_model());
  ASSERT_TRUE(a.has_value() && b.has_value());
  const uint64_t before = pool->stats().tasks_run;
  auto ra = (*a)->run({{"x", input()}});
  auto rb = (*b)->run({{"x", input()}});
  ASSERT_TRUE(ra.has_value() && rb.has_value());
  EXPECT_EQ(values_of((*ra)[0]), values_of((*rb)[0]));
  EXPECT_GT(pool->stats().tasks_run, before);
}

}  // namespace
}  // namespace loom
