// Runs recorded once and replayed (exec/run_recorder.h) with the test_async
// plugin, whose streams record queued jobs and replay them (option capture):
// the second run with given shapes is recorded, later ones replay it and
// give the same outputs as runs step by step, for new inputs, static and
// dynamic shapes; other shapes, profiled runs and concurrent runs go the
// usual way; plans the recorder cannot take (a node on the host, a value
// the host computes mid-run) are run step by step, and a recording the EP
// refuses turns recording off without failing the run.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "common/async_fault_plugin.h"

namespace loom {
namespace {

using testing::chain_input;
using testing::chain_model;
using testing::expected_chain_output;

struct Counters {
  uint64_t (*recordings)();
  uint64_t (*replays)();
};

Counters counters() {
  const std::string lib = testing::test_plugin_dir("async") + "/libloom_test_async_ep.so";
  return {testing::plugin_symbol<uint64_t (*)()>(lib, "loom_test_async_recordings"),
          testing::plugin_symbol<uint64_t (*)()>(lib, "loom_test_async_replays")};
}

std::shared_ptr<Environment> recording_env(const std::string& capture = "1", Config config = {}) {
  return testing::fault_env({{"capture", capture}, {"latency_us", "20"}}, std::move(config));
}

Tensor scaled_input(int64_t rows, float scale) {
  Tensor x = chain_input(rows);
  float* p = x.mutable_data_as<float>();
  for (int64_t i = 0; i < x.element_count(); ++i) p[i] *= scale;
  return x;
}

void expect_chain(const Expected<std::vector<Tensor>>& out, const Tensor& x, const std::string& what) {
  ASSERT_TRUE(out.has_value()) << what << ": " << out.status().message();
  EXPECT_EQ(testing::values_of((*out)[0]), expected_chain_output(x)) << what;
}

TEST(RunRecorder, SecondRunIsRecordedAndLaterRunsReplayIt) {
  for (int64_t rows : {int64_t{4}, int64_t{-1}}) {  // static, then dynamic shapes
    auto env = recording_env();
    const Counters c = counters();
    auto session = Session::create_from_bytes(env, chain_model(rows));
    ASSERT_TRUE(session.has_value()) << session.status().message();
    const uint64_t recorded = c.recordings(), replayed = c.replays();
    for (int run = 0; run < 6; ++run) {
      const Tensor x = scaled_input(4, 1.f + 0.5f * run);  // new values every run
      expect_chain((*session)->run({{"x", x}}), x, "run " + std::to_string(run) + ", rows " + std::to_string(rows));
    }
    EXPECT_EQ(c.recordings() - recorded, 1u) << "rows " << rows;
    // The recording run replays its recording once to compute, then runs 3-6.
    EXPECT_EQ(c.replays() - replayed, 5u) << "rows " << rows;
  }
}

TEST(RunRecorder, OtherShapesRunStepByStep) {
  auto env = recording_env();
  const Counters c = counters();
  auto session = Session::create_from_bytes(env, chain_model(-1));
  ASSERT_TRUE(session.has_value()) << session.status().message();
  for (int run = 0; run < 3; ++run) expect_chain((*session)->run({{"x", chain_input(4)}}), chain_input(4), "rows 4");
  const uint64_t replayed = c.replays();
  for (int64_t rows : {int64_t{3}, int64_t{7}, int64_t{3}}) {
    const Tensor x = chain_input(rows);
    expect_chain((*session)->run({{"x", x}}), x, "rows " + std::to_string(rows));
  }
  EXPECT_EQ(c.replays(), replayed) << "a recording replayed for other shapes";
  expect_chain((*session)->run({{"x", chain_input(4)}}), chain_input(4), "rows 4 again");
  EXPECT_EQ(c.replays(), replayed + 1);
}

// Usual runs (on other resources, with memory from the same arenas) while
// the recording replays: the recording's buffers must stay its own.
TEST(RunRecorder, ConcurrentRunsAgreeWithStepByStep) {
  for (int64_t rows : {int64_t{4}, int64_t{-1}}) {
  auto env = recording_env();
  auto session = Session::create_from_bytes(env, chain_model(rows));
  ASSERT_TRUE(session.has_value()) << session.status().message();
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        const Tensor x = scaled_input(4, 1.f + 0.1f * static_cast<float>(t * 25 + i));
        auto out = (*session)->run({{"x", x}});
        if (!out || testing::values_of((*out)[0]) != expected_chain_output(x)) ++wrong;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0) << "rows " << rows;
  }
}

TEST(RunRecorder, NothingIsKeptOnceTheSessionIsGone) {
  auto env = recording_env();
  const testing::FaultHooks h = testing::hooks();
  const testing::Live before = testing::live(h);
  {
    auto session = Session::create_from_bytes(env, chain_model(-1));
    ASSERT_TRUE(session.has_value()) << session.status().message();
    for (int run = 0; run < 4; ++run) expect_chain((*session)->run({{"x", chain_input(4)}}), chain_input(4), "run");
  }
  EXPECT_EQ(testing::live(h), before);
}

TEST(RunRecorder, ProfiledRunsGoStepByStep) {
  Config config;
  config.profiling_enabled = true;
  config.profiling_path = ::testing::TempDir() + "/run_recorder_profile.json";
  auto env = recording_env("1", config);
  const Counters c = counters();
  auto session = Session::create_from_bytes(env, chain_model(4));
  ASSERT_TRUE(session.has_value()) << session.status().message();
  const uint64_t recorded = c.recordings();
  for (int run = 0; run < 3; ++run) expect_chain((*session)->run({{"x", chain_input(4)}}), chain_input(4), "profiled");
  EXPECT_EQ(c.recordings(), recorded) << "a profiled run must show its steps";
}

TEST(RunRecorder, RefusedRecordingTurnsItselfOffAndTheRunStillAnswers) {
  auto env = recording_env("fail");
  const Counters c = counters();
  auto session = Session::create_from_bytes(env, chain_model(4));
  ASSERT_TRUE(session.has_value()) << session.status().message();
  const uint64_t replayed = c.replays();
  for (int run = 0; run < 4; ++run) {
    const Tensor x = scaled_input(4, 2.f - run);
    expect_chain((*session)->run({{"x", x}}), x, "run " + std::to_string(run));
  }
  EXPECT_EQ(c.replays(), replayed);
}

// Hardmax is the reference EP's alone: the plan has a host step mid-run.
TEST(RunRecorder, PlansWithHostWorkRunStepByStep) {
  auto env = recording_env();
  const Counters c = counters();
  testing::ModelBuilder m;
  m.input("x", ::onnx::TensorProto::FLOAT, {4, 8});
  m.node("Relu", {"x"}, {"a"}, "relu");
  m.node("Hardmax", {"a"}, {"h"}, "hardmax");
  m.node("Relu", {"h"}, {"y"}, "relu2");
  m.output("y", ::onnx::TensorProto::FLOAT, {4, 8});
  auto session = Session::create_from_bytes(env, m.bytes());
  ASSERT_TRUE(session.has_value()) << session.status().message();
  const uint64_t recorded = c.recordings();
  for (int run = 0; run < 3; ++run) {
    auto out = (*session)->run({{"x", chain_input(4, 8)}});
    ASSERT_TRUE(out.has_value()) << out.status().message();
  }
  EXPECT_EQ(c.recordings(), recorded);
}

}  // namespace
}  // namespace loom
