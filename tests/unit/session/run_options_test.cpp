// RunOptions: a run cancelled from another thread ends with CANCELLED at a
// step boundary (also inside a Loop body), leaves the session usable and
// leaks nothing; a tag names the run in its errors.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "common/model_builder.h"
#include "common/test_env.h"

namespace loom {
namespace {

constexpr auto kFloat = ::onnx::TensorProto::FLOAT;

// 400 Sin nodes over 256 Ki floats: a run of a few hundred ms on the reference EP.
std::string long_chain_model() {
  testing::ModelBuilder m(14);
  m.input("x", kFloat, {256, 1024});
  std::string v = "x";
  for (int i = 0; i < 400; ++i) {
    const std::string out = "s" + std::to_string(i);
    m.node("Sin", {v}, {out});
    v = out;
  }
  m.node("Identity", {v}, {"y"});
  m.output("y", kFloat, {256, 1024});
  return m.bytes();
}

std::map<std::string, Tensor> long_chain_inputs() {
  return {{"x", testing::float_tensor({256, 1024}, std::vector<float>(256 * 1024, 0.5f))}};
}

TEST(RunOptionsTest, CancelFromAnotherThreadStopsTheRun) {
  auto s = Session::create_from_bytes(testing::reference_env(), long_chain_model());
  ASSERT_TRUE(s.has_value()) << s.status().message();
  const auto in = long_chain_inputs();
  const auto start = std::chrono::steady_clock::now();
  auto full = (*s)->run(in);
  const auto full_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(full.has_value()) << full.status().message();

  RunOptions options;
  options.cancel = std::make_shared<CancelToken>();
  options.tag = "request-17";
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(full_ms / 10));
    options.cancel->cancel();
  });
  const auto t0 = std::chrono::steady_clock::now();
  auto cancelled = (*s)->run(in, {}, options);
  const auto cancelled_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  canceller.join();
  ASSERT_FALSE(cancelled.has_value());
  EXPECT_EQ(cancelled.status().code(), StatusCode::kCancelled) << cancelled.status().message();
  EXPECT_NE(cancelled.status().message().find("[request-17]"), std::string::npos) << cancelled.status().message();
  EXPECT_LT(cancelled_ms, full_ms * 0.8) << "the run went on after cancel()";
  // The session is still usable, and a run with a fresh token completes.
  auto again = (*s)->run(in, {}, RunOptions{std::make_shared<CancelToken>(), ""});
  ASSERT_TRUE(again.has_value()) << again.status().message();
  EXPECT_EQ(testing::values_of((*again)[0]), testing::values_of((*full)[0]));
}

TEST(RunOptionsTest, AnAlreadyCancelledTokenRunsNothing) {
  auto s = Session::create_from_bytes(testing::reference_env(), long_chain_model());
  ASSERT_TRUE(s.has_value()) << s.status().message();
  RunOptions options;
  options.cancel = std::make_shared<CancelToken>();
  options.cancel->cancel();
  auto r = (*s)->run(long_chain_inputs(), {}, options);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.status().code(), StatusCode::kCancelled);
  EXPECT_NE(r.status().message().find("before step 1 of"), std::string::npos) << r.status().message();
}

TEST(RunOptionsTest, CancelReachesALoopBody) {
  // Loop with 10^7 trips of y = y + 1: only a check inside the body can stop it.
  testing::ModelBuilder m(14);
  m.input("trips", ::onnx::TensorProto::INT64, {});
  m.input("y0", kFloat, {1});
  auto& loop = m.node("Loop", {"trips", "", "y0"}, {"y"});
  ::onnx::GraphProto body;
  body.set_name("body");
  auto add_io = [](::onnx::ValueInfoProto* vi, const std::string& name, int type) {
    vi->set_name(name);
    vi->mutable_type()->mutable_tensor_type()->set_elem_type(type);
  };
  add_io(body.add_input(), "i", ::onnx::TensorProto::INT64);
  add_io(body.add_input(), "cond_in", ::onnx::TensorProto::BOOL);
  add_io(body.add_input(), "y_in", kFloat);
  add_io(body.add_output(), "cond_out", ::onnx::TensorProto::BOOL);
  add_io(body.add_output(), "y_out", kFloat);
  auto* one = body.add_initializer();
  one->set_name("one");
  one->set_data_type(kFloat);
  one->add_float_data(1.f);
  auto* id = body.add_node();
  id->set_op_type("Identity");
  id->add_input("cond_in");
  id->add_output("cond_out");
  auto* add = body.add_node();
  add->set_op_type("Add");
  add->add_input("y_in");
  add->add_input("one");
  add->add_output("y_out");
  auto* a = loop.add_attribute();
  a->set_name("body");
  a->set_type(::onnx::AttributeProto::GRAPH);
  *a->mutable_g() = body;
  m.output("y", kFloat, {1});
  auto s = Session::create_from_bytes(testing::reference_env(), m.bytes());
  ASSERT_TRUE(s.has_value()) << s.status().message();
  RunOptions options;
  options.cancel = std::make_shared<CancelToken>();
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    options.cancel->cancel();
  });
  auto trips = Tensor::from_vector<int64_t>(DType::kInt64, {}, {10000000});
  const auto t0 = std::chrono::steady_clock::now();
  auto r = (*s)->run({{"trips", trips}, {"y0", testing::float_tensor({1}, {0.f})}}, {}, options);
  const auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  canceller.join();
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.status().code(), StatusCode::kCancelled) << r.status().message();
  EXPECT_LT(ms, 5000) << "the Loop ran on after cancel()";
}

// x -> Relu -> Neg -> y, on the reference EP.
std::string small_model() {
  testing::ModelBuilder m;
  m.input("x", kFloat, {2, 3});
  m.node("Relu", {"x"}, {"r"}, "relu");
  m.node("Neg", {"r"}, {"y"}, "neg");
  m.output("y", kFloat, {2, 3});
  return m.bytes();
}

std::string logged_run(const Session& s, const RunOptions& options, bool* ok) {
  ::testing::internal::CaptureStderr();
  auto out = s.run({{"x", testing::float_tensor({2, 3}, {1, -2, 3, -4, 5, -6})}}, {}, options);
  std::string err = ::testing::internal::GetCapturedStderr();
  *ok = out.has_value();
  return err;
}

TEST(RunOptionsTest, PerRunLogLevelAndTag) {
  auto env = testing::reference_env();  // global level: warn
  auto s = Session::create_from_bytes(env, small_model());
  ASSERT_TRUE(s.has_value()) << s.status().message();
  bool ok = false;
  RunOptions debug;
  debug.log_level = "debug";
  debug.tag = "request-42";
  std::string err = logged_run(**s, debug, &ok);
  EXPECT_TRUE(ok);
  EXPECT_NE(err.find("[request-42] step 0/2 node 'relu' (Relu) on 'reference'"), std::string::npos) << err;
  EXPECT_NE(err.find("[request-42] step 1/2 node 'neg' (Neg)"), std::string::npos) << err;
  // Other runs keep the environment's level.
  err = logged_run(**s, RunOptions{}, &ok);
  EXPECT_TRUE(ok);
  EXPECT_EQ(err.find("step 0/2"), std::string::npos) << err;
  RunOptions bad;
  bad.log_level = "chatty";
  auto out = (*s)->run({{"x", testing::float_tensor({2, 3}, {1, 2, 3, 4, 5, 6})}}, {}, bad);
  ASSERT_FALSE(out.has_value());
  EXPECT_NE(out.status().message().find("run log level 'chatty'"), std::string::npos) << out.status().message();
}

TEST(RunOptionsTest, PerRunLogLevelReachesParallelWorkers) {
  Config c;
  c.providers = {"reference"};
  c.execution_mode = ExecutionMode::kParallel;
  c.inter_op_threads = 2;
  auto s = Session::create_from_bytes(testing::make_env(c), small_model());
  ASSERT_TRUE(s.has_value()) << s.status().message();
  RunOptions debug;
  debug.log_level = "debug";
  debug.tag = "par";
  bool ok = false;
  const std::string err = logged_run(**s, debug, &ok);
  EXPECT_TRUE(ok);
  EXPECT_NE(err.find("[par] step 0/2"), std::string::npos) << err;
  EXPECT_NE(err.find("[par] step 1/2"), std::string::npos) << err;
}

}  // namespace
}  // namespace loom
