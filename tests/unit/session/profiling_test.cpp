// Profiling: Session::end_profiling writes the trace `loom profile` reads
// (format in tools/loom/profile_trace.h): session phases, run / executor /
// step spans with shapes and kernel time, and device spans for EPs whose
// events time the device (the test_async EP).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "common/model_builder.h"
#include "common/test_env.h"

namespace loom {
namespace {

using Json = nlohmann::json;

std::string model() {
  testing::ModelBuilder m;
  m.input("x", ::onnx::TensorProto::FLOAT, {2, 3});
  m.node("Relu", {"x"}, {"a"}, "relu");
  m.node("Sigmoid", {"a"}, {"b"}, "sigmoid");
  m.node("Mul", {"b", "a"}, {"y"}, "mul");
  m.output("y", ::onnx::TensorProto::FLOAT, {2, 3});
  return m.bytes();
}

std::string trace_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("loom_profiling_test_" + name + ".json")).string();
}

Json read_trace(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  return Json::parse(in);
}

std::vector<Json> events(const Json& trace, const std::string& cat) {
  std::vector<Json> out;
  for (const Json& e : trace["traceEvents"])
    if (e.value("ph", "") == "X" && e.value("cat", "") == cat) out.push_back(e);
  return out;
}

std::unique_ptr<Session> profiled(std::vector<std::string> providers, const std::string& path,
                                  const std::string& plugins = "") {
  Config c;
  c.providers = std::move(providers);
  c.optimization_level = OptimizationLevel::kDisabled;
  c.profiling_enabled = true;
  c.profiling_path = path;
  auto s = Session::create_from_bytes(testing::make_env(c, plugins), model());
  EXPECT_TRUE(s.has_value()) << s.status().message();
  return s.has_value() ? std::move(*s) : nullptr;
}

Tensor input() { return testing::float_tensor({2, 3}, {1, -2, 3, -4, 5, -6}); }

TEST(ProfilingTest, OffUnlessConfigured) {
  auto s = Session::create_from_bytes(testing::reference_env(), model());
  ASSERT_TRUE(s.has_value());
  auto path = (*s)->end_profiling();
  ASSERT_FALSE(path.has_value());
  EXPECT_NE(path.status().message().find("profiling is off"), std::string::npos);
}

TEST(ProfilingTest, SessionOptionsTurnItOnForOneSession) {
  const std::string path = trace_path("options");
  SessionOptions options;
  options.profiling = true;
  options.profile_path = path;
  auto s = Session::create_from_bytes(testing::reference_env(), model(), options);
  ASSERT_TRUE(s.has_value()) << s.status().message();
  ASSERT_TRUE((*s)->run({{"x", input()}}).has_value());
  auto written = (*s)->end_profiling();
  ASSERT_TRUE(written.has_value()) << written.status().message();
  EXPECT_EQ(*written, path);
  EXPECT_EQ(events(read_trace(path), "step").size(), 3u);
  std::filesystem::remove(path);
}

TEST(ProfilingTest, SessionPhasesRunsAndSteps) {
  const std::string path = trace_path("reference");
  auto s = profiled({"reference"}, path);
  ASSERT_TRUE(s);
  RunOptions tagged;
  tagged.tag = "second";
  ASSERT_TRUE(s->run({{"x", input()}}).has_value());
  ASSERT_TRUE(s->run({{"x", input()}}, {}, tagged).has_value());
  auto written = s->end_profiling();
  ASSERT_TRUE(written.has_value()) << written.status().message();
  EXPECT_EQ(*written, path);
  const Json trace = read_trace(path);
  EXPECT_EQ(trace["otherData"]["loom_profile_version"], 1);
  EXPECT_EQ(trace["otherData"]["providers"], Json::array({"reference"}));
  std::set<std::string> phases;
  for (const Json& e : events(trace, "session")) {
    phases.insert(e["name"].get<std::string>());
    EXPECT_EQ(e["tid"], 0);
    EXPECT_GE(e["dur"].get<double>(), 0.0);
  }
  for (const char* p : {"load", "transform", "partition", "plan"}) EXPECT_TRUE(phases.count(p)) << p;
  const auto runs = events(trace, "run");
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[1]["args"]["run"], 2);
  EXPECT_EQ(runs[1]["args"]["tag"], "second");
  const auto executors = events(trace, "executor");
  ASSERT_EQ(executors.size(), 2u);
  for (int r = 0; r < 2; ++r) {
    // The executor lies inside its run.
    EXPECT_GE(executors[r]["ts"].get<double>(), runs[r]["ts"].get<double>());
    EXPECT_LE(executors[r]["ts"].get<double>() + executors[r]["dur"].get<double>(),
              runs[r]["ts"].get<double>() + runs[r]["dur"].get<double>() + 1e-3);
  }
  const auto steps = events(trace, "step");
  ASSERT_EQ(steps.size(), 6u);
  const Json& mul = steps[2];
  EXPECT_EQ(mul["name"], "mul");
  EXPECT_EQ(mul["args"]["op_type"], "Mul");
  EXPECT_EQ(mul["args"]["ep"], "reference");
  EXPECT_EQ(mul["args"]["kind"], "kernel");
  EXPECT_EQ(mul["args"]["inputs"], "float[2,3]; float[2,3]");
  EXPECT_EQ(mul["args"]["outputs"], "float[2,3]");
  EXPECT_GE(mul["args"]["kernel_us"].get<double>(), 0.0);
  EXPECT_LE(mul["args"]["kernel_us"].get<double>(), mul["dur"].get<double>());
  EXPECT_EQ(steps[5]["args"]["run"], 2);
  std::filesystem::remove(path);
}

TEST(ProfilingTest, AsyncDeviceStepsGetDeviceSpans) {
  const std::string path = trace_path("async");
  auto s = profiled({"test_async", "reference"}, path, "async");
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->run({{"x", input()}}).has_value());
  ASSERT_TRUE(s->end_profiling().has_value());
  const Json trace = read_trace(path);
  // Relu and Mul on the device, Sigmoid on the host: copies x in, a out,
  // b in, y out; all launched on stream 1.
  int launches = 0, copies = 0;
  for (const Json& e : events(trace, "step")) {
    if (e["tid"] != 101) continue;
    ++launches;
    if (e["args"]["kind"] == "copy") {
      ++copies;
      EXPECT_EQ(e["args"]["bytes"], 24);
    }
  }
  EXPECT_EQ(launches, 7);  // and the record of the event the host waits on
  EXPECT_EQ(copies, 4);
  const auto device = events(trace, "device");
  ASSERT_EQ(device.size(), 6u);
  for (const Json& e : device) {
    EXPECT_EQ(e["pid"], 2);
    EXPECT_EQ(e["tid"], 1);
    // The worker sleeps 200 us before every job: each device span holds at
    // least the step's own job.
    EXPECT_GE(e["dur"].get<double>(), 150.0) << e.dump();
  }
  bool device_lane_named = false;
  for (const Json& e : trace["traceEvents"])
    if (e.value("ph", "") == "M" && e.value("name", "") == "thread_name" && e["pid"] == 2 && e["tid"] == 1)
      device_lane_named = e["args"]["name"] == "stream 1 (test_async)";
  EXPECT_TRUE(device_lane_named);
  std::filesystem::remove(path);
}

TEST(ProfilingTest, CompiledPartitionsGetCompileSpans) {
  const std::string path = trace_path("fused");
  testing::ModelBuilder m;
  m.input("x", ::onnx::TensorProto::FLOAT, {2, 3});
  m.node("Relu", {"x"}, {"a"}, "relu");
  m.node("Add", {"a", "x"}, {"y"}, "add");
  m.output("y", ::onnx::TensorProto::FLOAT, {2, 3});
  Config c;
  c.providers = {"test_fused", "reference"};
  c.profiling_enabled = true;
  c.profiling_path = path;
  auto s = Session::create_from_bytes(testing::make_env(c, "device"), m.bytes());
  ASSERT_TRUE(s.has_value()) << s.status().message();
  ASSERT_TRUE((*s)->run({{"x", input()}}).has_value());
  ASSERT_TRUE((*s)->end_profiling().has_value());
  const Json trace = read_trace(path);
  int compiles = 0;
  for (const Json& e : events(trace, "session"))
    if (e["name"] == "compile") {
      ++compiles;
      EXPECT_EQ(e["args"]["ep"], "test_fused");
    }
  EXPECT_EQ(compiles, 1);
  const auto steps = events(trace, "step");
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0]["args"]["kind"], "partition");
  EXPECT_EQ(steps[0]["args"]["op_type"], "fused(Relu+Add)");
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace loom
