// A plugin that fails on purpose at one point (the test_async EP with the
// fault options of tests/plugins/fault_injection.h): session creation or the
// run returns an error naming the provider (and the node where one is
// involved), the plugin's live objects all go back when the session goes,
// and the environment keeps working once the fault is spent or switched off.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "common/async_fault_plugin.h"

namespace loom {
namespace {

using testing::chain_input;
using testing::chain_model;
using testing::expected_chain_output;
using testing::FaultEnv;
using testing::live;
using testing::values_of;

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

struct FaultCase {
  const char* point;
  bool fused;          // the EP compiles the chain as one partition
  bool at_creation;    // the point is reached while the session is created
  const char* node;    // the node (or value) the message must name ("" where none is involved)
  StatusCode code;     // the status code the caller sees
  const char* call = "1";  // the first call at the point that fails
};

std::ostream& operator<<(std::ostream& os, const FaultCase& c) {
  return os << c.point << (c.fused ? " (fused)" : " (kernels)") << " from call " << c.call;
}

class FailingPluginTest : public ::testing::TestWithParam<FaultCase> {
 protected:
  std::map<std::string, std::string> options(bool once) const {
    std::map<std::string, std::string> o = {{"fail_at", GetParam().point}, {"fail_call", GetParam().call}};
    if (GetParam().fused) o["fuse"] = "1";
    if (once) o["fail_once"] = "1";
    return o;
  }
  // `first`: the first failing call, the one GetParam().node names (later
  // calls of a fault that stays on may fail at an earlier node).
  void expect_names_failure(const Status& st, bool first = true) const {
    const std::string& m = st.message();
    EXPECT_EQ(st.code(), GetParam().code) << m;
    if (GetParam().code != StatusCode::kOutOfMemory) {  // an allocator only returns NULL; the arena words it
      EXPECT_TRUE(contains(m, "injected fault at " + std::string(GetParam().point))) << m;
    }
    EXPECT_TRUE(contains(m, "test_async")) << "the message names the provider: " << m;
    if (first && *GetParam().node) {
      EXPECT_TRUE(contains(m, GetParam().node)) << "the message names the node: " << m;
    }
  }
};

// A fault that stays on: the failing call reports it; with the fault
// switched off the same session (or a new one in the same environment)
// gives correct results; nothing the plugin made outlives the session.
TEST_P(FailingPluginTest, PersistentFaultFailsCleanlyAndSwitchedOffWorks) {
  FaultEnv f(options(false));
  ASSERT_TRUE(f.ready());
  auto& env = f.env;
  const Tensor x = chain_input();
  {
    auto s = Session::create_from_bytes(env, chain_model());
    if (GetParam().at_creation) {
      ASSERT_FALSE(s.has_value()) << "creation succeeded despite a fault at " << GetParam().point;
      expect_names_failure(s.status());
      EXPECT_EQ(live(f.hooks), f.baseline) << "a failed creation releases what it made";
      f.hooks.disarm();
      s = Session::create_from_bytes(env, chain_model());
    }
    ASSERT_TRUE(s.has_value()) << s.status().message();
    if (!GetParam().at_creation) {
      for (int attempt = 0; attempt < 2; ++attempt) {  // a failed run leaves the session as it was
        auto failed = (*s)->run({{"x", x}});
        ASSERT_FALSE(failed.has_value()) << "run succeeded despite a fault at " << GetParam().point;
        expect_names_failure(failed.status(), attempt == 0);
      }
      f.hooks.disarm();
    }
    auto ok = (*s)->run({{"x", x}});
    ASSERT_TRUE(ok.has_value()) << ok.status().message();
    EXPECT_EQ(values_of((*ok)[0]), expected_chain_output(x));
  }
  EXPECT_EQ(live(f.hooks), f.baseline) << "the session released everything the plugin made";
}

// A one-shot fault: the call after the failing one succeeds without any
// switch, so the next session creation or run just works.
TEST_P(FailingPluginTest, OneShotFaultThenNextAttemptWorks) {
  FaultEnv f(options(true));
  ASSERT_TRUE(f.ready());
  auto& env = f.env;
  const Tensor x = chain_input();
  {
    auto s = Session::create_from_bytes(env, chain_model());
    if (GetParam().at_creation) {
      ASSERT_FALSE(s.has_value());
      expect_names_failure(s.status());
      s = Session::create_from_bytes(env, chain_model());
    }
    ASSERT_TRUE(s.has_value()) << s.status().message();
    if (!GetParam().at_creation) {
      auto failed = (*s)->run({{"x", x}});
      // One refused chunk may be absorbed: the arena retries with an
      // exact-size chunk (allocation_fault_test.cpp sweeps every allocation).
      if (GetParam().code == StatusCode::kOutOfMemory && failed.has_value()) {
        EXPECT_EQ(values_of((*failed)[0]), expected_chain_output(x));
      } else {
        ASSERT_FALSE(failed.has_value());
        expect_names_failure(failed.status());
      }
    }
    for (int i = 0; i < 2; ++i) {
      auto ok = (*s)->run({{"x", x}});
      ASSERT_TRUE(ok.has_value()) << ok.status().message();
      EXPECT_EQ(values_of((*ok)[0]), expected_chain_output(x));
    }
  }
  EXPECT_EQ(live(f.hooks), f.baseline);
}

INSTANTIATE_TEST_SUITE_P(
    Points, FailingPluginTest,
    ::testing::Values(FaultCase{"get_capability", true, true, "", StatusCode::kFail},
                      FaultCase{"compile", true, true, "relu1", StatusCode::kFail},
                      FaultCase{"kernel_create", false, true, "relu1", StatusCode::kFail},
                      FaultCase{"create_state", true, false, "relu1", StatusCode::kFail},
                      FaultCase{"compute", true, false, "relu1", StatusCode::kFail},
                      FaultCase{"compute", false, false, "relu1", StatusCode::kFail},
                      FaultCase{"allocate", false, false, "", StatusCode::kOutOfMemory},
                      FaultCase{"copy", false, false, "'x'", StatusCode::kFail},
                      FaultCase{"stream_synchronize", false, false, "", StatusCode::kFail},
                      // Later calls: what the earlier ones made must go back too.
                      FaultCase{"kernel_create", false, true, "add", StatusCode::kFail, "3"},
                      FaultCase{"compute", false, false, "add", StatusCode::kFail, "3"},
                      FaultCase{"copy", false, false, "'y'", StatusCode::kFail, "2"}),
    [](const ::testing::TestParamInfo<FaultCase>& info) {
      return std::string(info.param.point) + (info.param.fused ? "_fused" : "_kernels") + "_call" + info.param.call;
    });

// Parallel execution: independent branches on the device run at once, so a
// fault meets other steps in flight. The run still fails as one, naming the
// provider and a node; what the other branches made goes back; concurrent
// runs of the same session that do not meet the fault are unaffected.
std::string branches_model(int branches) {
  testing::ModelBuilder m;
  m.input("x", ::onnx::TensorProto::FLOAT, {4, 256});
  for (int b = 0; b < branches; ++b) {
    const std::string i = std::to_string(b);
    m.node("Relu", {"x"}, {"r" + i}, "relu_branch" + i);
    m.node("Mul", {"r" + i, "x"}, {"m" + i}, "mul_branch" + i);
    m.node("Add", {"m" + i, "r" + i}, {"a" + i}, "add_branch" + i);
    m.node("Relu", {"a" + i}, {"y" + i}, "out_branch" + i);
    m.output("y" + i, ::onnx::TensorProto::FLOAT, {4, 256});
  }
  return m.bytes();
}

Config parallel_config() {
  Config c;
  c.execution_mode = ExecutionMode::kParallel;
  c.inter_op_threads = 3;
  return c;
}

constexpr int kBranches = 4;

void expect_branch_outputs(const Expected<std::vector<Tensor>>& out, const Tensor& x) {
  ASSERT_TRUE(out.has_value()) << out.status().message();
  ASSERT_EQ(out->size(), static_cast<size_t>(kBranches));
  for (const Tensor& y : *out) EXPECT_EQ(values_of(y), expected_chain_output(x));
}

TEST(FailingPluginParallelTest, FaultAmongParallelBranchesFailsTheRunAndReleasesEverything) {
  for (const char* point : {"compute", "copy", "stream_synchronize"}) {
    SCOPED_TRACE(point);
    // From a call the first run reaches (a run may synchronise only once).
    const std::string call = std::string(point) == "stream_synchronize" ? "1" : "3";
    FaultEnv f({{"fail_at", point}, {"fail_call", call}}, parallel_config());
    ASSERT_TRUE(f.ready());
    const Tensor x = chain_input();
    {
      auto s = Session::create_from_bytes(f.env, branches_model(kBranches));
      ASSERT_TRUE(s.has_value()) << s.status().message();
      for (int attempt = 0; attempt < 3; ++attempt) {
        auto failed = (*s)->run({{"x", x}});
        ASSERT_FALSE(failed.has_value()) << "run succeeded despite a fault at " << point;
        const std::string m = failed.status().message();
        EXPECT_EQ(failed.status().code(), StatusCode::kFail) << m;
        EXPECT_TRUE(contains(m, "injected fault at " + std::string(point))) << m;
        EXPECT_TRUE(contains(m, "test_async")) << m;
        if (std::string(point) != "stream_synchronize") {
          EXPECT_TRUE(contains(m, "_branch") || contains(m, "'x'") || contains(m, "'y")) << "names a node: " << m;
        }
      }
      f.hooks.disarm();
      expect_branch_outputs((*s)->run({{"x", x}}), x);
    }
    EXPECT_EQ(live(f.hooks), f.baseline) << "the session released everything the plugin made";
  }
}

TEST(FailingPluginParallelTest, OneFaultAmongConcurrentRunsFailsOnlyThatRun) {
  for (const char* point : {"compute", "copy"}) {
    SCOPED_TRACE(point);
    FaultEnv f({{"fail_at", point}, {"fail_call", "40"}, {"fail_once", "1"}}, parallel_config());
    ASSERT_TRUE(f.ready());
    const Tensor x = chain_input();
    {
      auto s = Session::create_from_bytes(f.env, branches_model(kBranches));
      ASSERT_TRUE(s.has_value()) << s.status().message();
      constexpr int kThreads = 4, kRuns = 6;
      std::atomic<int> failures{0}, wrong{0};
      std::vector<std::string> messages(kThreads);
      std::vector<std::thread> threads;
      for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
          for (int r = 0; r < kRuns; ++r) {
            auto out = (*s)->run({{"x", x}});
            if (!out.has_value()) {
              ++failures;
              messages[t] = out.status().message();
              continue;
            }
            for (const Tensor& y : *out)
              if (values_of(y) != expected_chain_output(x)) ++wrong;
          }
        });
      for (auto& t : threads) t.join();
      EXPECT_EQ(failures.load(), 1) << "the one-shot fault fails exactly one run of " << kThreads * kRuns;
      EXPECT_EQ(wrong.load(), 0) << "runs beside the failing one give correct results";
      for (const std::string& m : messages)
        if (!m.empty()) EXPECT_TRUE(contains(m, "injected fault at " + std::string(point))) << m;
      expect_branch_outputs((*s)->run({{"x", x}}), x);
    }
    EXPECT_EQ(live(f.hooks), f.baseline);
  }
}

}  // namespace
}  // namespace loom
