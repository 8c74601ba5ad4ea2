// RunOptions::observe: the run shows the caller the values it asked for, as
// the steps make them (the hook `loom calibrate` collects activations with),
// in sequential and parallel execution alike, and refuses names the plan
// does not compute.
#include <gtest/gtest.h>

#include <mutex>

#include "common/model_builder.h"
#include "common/test_env.h"

namespace loom {
namespace {

using testing::float_tensor;
using testing::values_of;

// x -> Relu (r) -> Neg (n) -> Add with x (y); also x -> Sigmoid (s) -> z.
std::string model() {
  testing::ModelBuilder m;
  m.input("x", ::onnx::TensorProto::FLOAT, {2, 3});
  m.node("Relu", {"x"}, {"r"}, "relu");
  m.node("Neg", {"r"}, {"n"}, "neg");
  m.node("Add", {"n", "x"}, {"y"}, "add");
  m.node("Sigmoid", {"x"}, {"s"}, "sigmoid");
  m.node("Relu", {"s"}, {"z"}, "relu2");
  m.output("y", ::onnx::TensorProto::FLOAT, {2, 3});
  m.output("z", ::onnx::TensorProto::FLOAT, {2, 3});
  return m.bytes();
}

const std::vector<float> kX = {-2, -1, 0, 1, 2, 3};

std::unique_ptr<Session> session(ExecutionMode mode) {
  Config c;
  c.providers = {"reference"};
  c.optimization_level = OptimizationLevel::kDisabled;
  c.execution_mode = mode;
  c.inter_op_threads = 2;
  auto env = testing::make_env(c);
  if (!env) return nullptr;
  auto s = Session::create_from_bytes(env, model());
  EXPECT_TRUE(s.has_value()) << s.status().message();
  return s.has_value() ? std::move(*s) : nullptr;
}

class ValueObserverTest : public ::testing::TestWithParam<ExecutionMode> {};

TEST_P(ValueObserverTest, SeesEachWatchedValueOnceWithItsContents) {
  auto s = session(GetParam());
  ASSERT_TRUE(s);
  std::mutex mutex;
  std::map<std::string, std::vector<std::vector<float>>> seen;
  RunOptions options;
  options.observed_values = {"r", "n", "s", "y"};
  options.observe = [&](const std::string& name, const Tensor& value) {
    std::lock_guard<std::mutex> lock(mutex);
    seen[name].push_back(values_of(value));
  };
  auto out = s->run({{"x", float_tensor({2, 3}, kX)}}, {}, options);
  ASSERT_TRUE(out.has_value()) << out.status().message();
  ASSERT_EQ(seen.size(), 4u) << "r, n, s and y, nothing else";
  for (const auto& [name, values] : seen) EXPECT_EQ(values.size(), 1u) << name;
  EXPECT_EQ(seen["r"][0], (std::vector<float>{0, 0, 0, 1, 2, 3}));
  EXPECT_EQ(seen["n"][0], (std::vector<float>{0, 0, 0, -1, -2, -3}));
  EXPECT_EQ(seen["y"][0], values_of((*out)[0]));
  EXPECT_NEAR(seen["s"][0][2], 0.5f, 1e-6f);
  // A run without the option sees nothing and gives the same outputs.
  seen.clear();
  auto plain = s->run({{"x", float_tensor({2, 3}, kX)}}, {});
  ASSERT_TRUE(plain.has_value());
  EXPECT_TRUE(seen.empty());
  EXPECT_EQ(values_of((*plain)[0]), values_of((*out)[0]));
}

INSTANTIATE_TEST_SUITE_P(Modes, ValueObserverTest,
                         ::testing::Values(ExecutionMode::kSequential, ExecutionMode::kParallel),
                         [](const auto& info) {
                           return info.param == ExecutionMode::kSequential ? "Sequential" : "Parallel";
                         });

TEST(ValueObserverErrorsTest, ObservableValuesAreThePlansComputedValues) {
  auto s = session(ExecutionMode::kSequential);
  ASSERT_TRUE(s);
  std::set<std::string> names;
  for (const ValueInfo& v : s->observable_values()) names.insert(v.name);
  EXPECT_EQ(names, (std::set<std::string>{"r", "n", "y", "s", "z"})) << "not the input x";
  for (const ValueInfo& v : s->observable_values()) EXPECT_EQ(v.dtype, DType::kFloat) << v.name;
}

TEST(ValueObserverErrorsTest, UnknownValueIsRefusedNamingIt) {
  auto s = session(ExecutionMode::kSequential);
  ASSERT_TRUE(s);
  RunOptions options;
  options.observed_values = {"r", "x"};
  options.observe = [](const std::string&, const Tensor&) {};
  auto out = s->run({{"x", float_tensor({2, 3}, kX)}}, {}, options);
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("cannot observe 'x'"), std::string::npos) << out.status().message();
}

}  // namespace
}  // namespace loom
