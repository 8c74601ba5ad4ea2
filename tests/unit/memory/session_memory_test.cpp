// Session memory: every run's buffers come from per-memory-kind arenas with
// the configured limits, and Session::memory_stats reports plan and use.
#include <gtest/gtest.h>

#include <cmath>

#include "common/memory_stats.h"
#include "common/model_builder.h"
#include "common/test_env.h"

namespace loom {
namespace {

using testing::float_tensor;

// x[N, 1024] -> Relu -> Sigmoid -> Neg -> y; N is symbolic, so intermediates
// are not planned and come from the arena at run time.
std::string dynamic_model() {
  testing::ModelBuilder m;
  m.input("x", ::onnx::TensorProto::FLOAT, {-1, 1024});
  m.node("Relu", {"x"}, {"a"}, "relu");
  m.node("Sigmoid", {"a"}, {"b"}, "sigmoid");
  m.node("Neg", {"b"}, {"y"}, "neg");
  m.output("y", ::onnx::TensorProto::FLOAT, {-1, 1024});
  return m.bytes();
}

// The same with a fixed shape [64, 1024]: intermediates are planned.
std::string static_model() {
  testing::ModelBuilder m;
  m.input("x", ::onnx::TensorProto::FLOAT, {64, 1024});
  m.node("Relu", {"x"}, {"a"}, "relu");
  m.node("Sigmoid", {"a"}, {"b"}, "sigmoid");
  m.node("Neg", {"b"}, {"y"}, "neg");
  m.output("y", ::onnx::TensorProto::FLOAT, {64, 1024});
  return m.bytes();
}

Tensor rows(int64_t n) { return float_tensor({n, 1024}, std::vector<float>(static_cast<size_t>(n) * 1024, 0.5f)); }

std::unique_ptr<Session> session_with(Config config, const std::string& model, const std::string& plugins = "") {
  if (config.providers.empty()) config.providers = {"reference"};
  config.optimization_level = OptimizationLevel::kDisabled;
  auto s = Session::create_from_bytes(testing::make_env(config, plugins), model);
  EXPECT_TRUE(s.has_value()) << s.status().message();
  return s.has_value() ? std::move(*s) : nullptr;
}

using testing::stats_of;

TEST(SessionMemoryTest, PlannedPeakIsKnownBeforeTheFirstRunAndArenaHoldsIt) {
  auto s = session_with({}, static_model());
  ASSERT_TRUE(s);
  const std::optional<MemoryStats> before = stats_of(s->memory_stats(), "cpu");
  ASSERT_TRUE(before);
  // a and b are 256 KiB each; Sigmoid writes b over a (a dies there and the
  // reference kernel allows it), so one buffer holds both.
  EXPECT_EQ(before->planned_peak_bytes, 64 * 1024 * 4);
  EXPECT_EQ(before->reserved_bytes, 0);
  ASSERT_TRUE(s->run({{"x", rows(64)}}).has_value());
  auto all = s->memory_stats();
  const std::optional<MemoryStats> after = stats_of(all, "cpu");
  ASSERT_TRUE(after);
  EXPECT_GE(after->reserved_bytes, after->planned_peak_bytes);
  // The planned block stays with the session for the next run.
  EXPECT_EQ(after->in_use_bytes, after->planned_peak_bytes);
  const int64_t allocations = after->allocations;
  ASSERT_TRUE(s->run({{"x", rows(64)}}).has_value());
  EXPECT_EQ(stats_of(s->memory_stats(), "cpu")->allocations, allocations) << "steady-state runs allocate nothing";
}

TEST(SessionMemoryTest, InPlaceOnlyWhereTheInputDiesAtTheStep) {
  // a = Relu(x); b = Sigmoid(a); c = Add(a, b) (a still needed: no in place
  // at Sigmoid, but Add may write over a); y = Neg(c).
  testing::ModelBuilder m;
  m.input("x", ::onnx::TensorProto::FLOAT, {64, 1024});
  m.node("Relu", {"x"}, {"a"}, "relu");
  m.node("Sigmoid", {"a"}, {"b"}, "sigmoid");
  m.node("Add", {"a", "b"}, {"c"}, "add");
  m.node("Neg", {"c"}, {"y"}, "neg");
  m.output("y", ::onnx::TensorProto::FLOAT, {64, 1024});
  auto s = session_with({}, m.bytes());
  ASSERT_TRUE(s);
  EXPECT_EQ(stats_of(s->memory_stats(), "cpu")->planned_peak_bytes, 2 * 64 * 1024 * 4);
  std::vector<float> x(64 * 1024);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 19) * 0.2f - 1.9f;
  auto got = s->run({{"x", float_tensor({64, 1024}, x)}});
  ASSERT_TRUE(got.has_value()) << got.status().message();
  std::vector<float> want(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const float a = std::max(x[i], 0.0f);
    want[i] = -(a + 1.0f / (1.0f + std::exp(-a)));
  }
  const std::vector<float> y = testing::values_of((*got)[0]);
  for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], want[i], 1e-6f) << i;
}

TEST(SessionMemoryTest, ShrinkAfterRunGivesEverythingBack) {
  Config c;
  c.shrink_arenas_after_run = true;
  auto s = session_with(c, static_model());
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->run({{"x", rows(64)}}).has_value());
  const std::optional<MemoryStats> after = stats_of(s->memory_stats(), "cpu");
  ASSERT_TRUE(after);
  EXPECT_EQ(after->in_use_bytes, 0);
  EXPECT_EQ(after->reserved_bytes, 0);
  EXPECT_GE(after->peak_in_use_bytes, after->planned_peak_bytes);
  ASSERT_TRUE(s->run({{"x", rows(64)}}).has_value()) << "a shrunk session runs again";
}

TEST(SessionMemoryTest, ArenaLimitRefusesBigRunsAndStaysUsable) {
  Config c;
  c.arena_limit_mb = {{"cpu", 1}};
  auto s = session_with(c, dynamic_model());
  ASSERT_TRUE(s);
  auto small = s->run({{"x", rows(16)}});
  ASSERT_TRUE(small.has_value()) << small.status().message();
  // 1024 rows: each intermediate is 4 MiB.
  auto big = s->run({{"x", rows(1024)}});
  ASSERT_FALSE(big.has_value());
  EXPECT_EQ(big.status().code(), StatusCode::kOutOfMemory) << big.status().message();
  EXPECT_NE(big.status().message().find("arena 'cpu'"), std::string::npos) << big.status().message();
  EXPECT_NE(big.status().message().find("relu"), std::string::npos) << big.status().message();
  const std::optional<MemoryStats> st = stats_of(s->memory_stats(), "cpu");
  ASSERT_TRUE(st);
  EXPECT_EQ(st->limit_bytes, 1 << 20);
  EXPECT_GE(st->failed_allocations, 1);
  EXPECT_EQ(st->in_use_bytes, 0) << "a failed run gives back what it took";
  auto again = s->run({{"x", rows(16)}});
  EXPECT_TRUE(again.has_value()) << again.status().message();
}

TEST(SessionMemoryTest, DynamicShapesArePlannedOncePerSignature) {
  auto s = session_with({}, dynamic_model());
  ASSERT_TRUE(s);
  auto allocations = [&] { return stats_of(s->memory_stats(), "cpu")->allocations; };
  auto run = [&](int64_t n) {
    auto out = s->run({{"x", rows(n)}});
    EXPECT_TRUE(out.has_value()) << out.status().message();
    return out.has_value() ? testing::values_of((*out)[0]) : std::vector<float>{};
  };
  EXPECT_EQ(s->memory_pattern_count(), 0u);
  const std::vector<float> first = run(16);
  EXPECT_EQ(s->memory_pattern_count(), 1u);
  // Later runs with the same shapes take one block for both intermediates.
  int64_t before = allocations();
  EXPECT_EQ(run(16), first);
  EXPECT_EQ(allocations() - before, 1);
  before = allocations();
  EXPECT_EQ(run(32).size(), 32u * 1024);
  EXPECT_EQ(allocations() - before, 2) << "new shapes record first";
  EXPECT_EQ(s->memory_pattern_count(), 2u);
  before = allocations();
  EXPECT_EQ(run(16), first);
  EXPECT_EQ(allocations() - before, 1);
  EXPECT_EQ(s->memory_pattern_count(), 2u);
}

TEST(SessionMemoryTest, DeviceMemoryHasItsOwnArenaAndLimit) {
  testing::ModelBuilder m;
  m.input("x", ::onnx::TensorProto::FLOAT, {-1, 1024});
  m.node("Relu", {"x"}, {"a"}, "relu");
  m.node("Relu", {"a"}, {"y"}, "relu2");
  m.output("y", ::onnx::TensorProto::FLOAT, {-1, 1024});
  Config c;
  c.providers = {"test_async", "reference"};
  c.arena_limit_mb = {{"test_async", 1}, {"*", 64}};
  auto s = session_with(c, m.bytes(), "async");
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->run({{"x", rows(16)}}).has_value());
  auto all = s->memory_stats();
  const std::optional<MemoryStats> device = stats_of(all, "test_async");
  const std::optional<MemoryStats> host = stats_of(all, "cpu");
  ASSERT_TRUE(device);
  ASSERT_TRUE(host);
  EXPECT_EQ(device->limit_bytes, 1 << 20);
  EXPECT_EQ(host->limit_bytes, int64_t{64} << 20);
  EXPECT_GT(device->peak_in_use_bytes, 0);
  auto big = s->run({{"x", rows(1024)}});
  ASSERT_FALSE(big.has_value());
  EXPECT_EQ(big.status().code(), StatusCode::kOutOfMemory);
  EXPECT_NE(big.status().message().find("arena 'test_async'"), std::string::npos) << big.status().message();
}

}  // namespace
}  // namespace loom
