// Config "limits": a model over max_model_mb / max_nodes / max_tensor_mb is
// refused at load naming the limit; a run that would make a tensor over
// max_tensor_mb fails with kOutOfMemory, one running past run_timeout_ms
// with kTimedOut; in both cases the session keeps working.
#include <gtest/gtest.h>

#include <chrono>
#include <map>

#include "common/model_builder.h"
#include "common/test_env.h"

namespace loom {
namespace {

using testing::ModelBuilder;

std::shared_ptr<Environment> env_with(const std::string& limits_json) {
  auto config = Config::from_json_string(R"({"providers": ["reference"], "limits": )" + limits_json + "}");
  EXPECT_TRUE(config.has_value()) << config.status().message();
  return config.has_value() ? testing::make_env(*config) : nullptr;
}

std::string create_error(const std::shared_ptr<Environment>& env, const std::string& bytes) {
  auto s = Session::create_from_bytes(env, bytes);
  return s.has_value() ? std::string("(created)") : s.status().message();
}

// x -> Relu -> Relu -> ... (n nodes) -> y
std::string chain_model(int n) {
  ModelBuilder m;
  m.input("x", ::onnx::TensorProto::FLOAT, {2});
  std::string prev = "x";
  for (int i = 0; i < n; ++i) {
    const std::string out = i + 1 == n ? "y" : "v" + std::to_string(i);
    m.node("Relu", {prev}, {out});
    prev = out;
  }
  m.output("y", ::onnx::TensorProto::FLOAT, {2});
  return m.bytes();
}

// y = x + w, w a float initializer of `elements` elements.
std::string add_weight_model(int64_t elements) {
  ModelBuilder m;
  m.input("x", ::onnx::TensorProto::FLOAT, {elements});
  m.float_initializer("w", {elements}, std::vector<float>(static_cast<size_t>(elements), 1.0f));
  m.node("Add", {"x", "w"}, {"y"});
  m.output("y", ::onnx::TensorProto::FLOAT, {elements});
  return m.bytes();
}

TEST(ResourceLimits, ConfigReadsAndChecksTheLimits) {
  auto c = Config::from_json_string(
      R"({"limits": {"max_model_mb": 100, "max_nodes": 5000, "max_tensor_mb": 10, "run_timeout_ms": 250}})");
  ASSERT_TRUE(c.has_value()) << c.status().message();
  EXPECT_EQ(c->max_model_mb, 100);
  EXPECT_EQ(c->max_nodes, 5000);
  EXPECT_EQ(c->max_tensor_mb, 10);
  EXPECT_EQ(c->run_timeout_ms, 250);
  EXPECT_NE(c->to_json().find("\"run_timeout_ms\": 250"), std::string::npos) << c->to_json();
  auto unknown = Config::from_json_string(R"({"limits": {"max_threads": 1}})");
  ASSERT_FALSE(unknown.has_value());
  EXPECT_NE(unknown.status().message().find("limits.max_threads"), std::string::npos) << unknown.status().message();
  auto negative = Config::from_json_string(R"({"limits": {"max_nodes": -1}})");
  ASSERT_FALSE(negative.has_value());
  EXPECT_NE(negative.status().message().find("limits.max_nodes"), std::string::npos) << negative.status().message();
}

TEST(ResourceLimits, TooManyNodesIsRefusedNamingTheLimit) {
  auto env = env_with(R"({"max_nodes": 3})");
  ASSERT_TRUE(env);
  EXPECT_EQ(create_error(env, chain_model(3)), "(created)");
  const std::string error = create_error(env, chain_model(4));
  EXPECT_NE(error.find("more than 3 nodes"), std::string::npos) << error;
  EXPECT_NE(error.find("limits.max_nodes"), std::string::npos) << error;
}

TEST(ResourceLimits, TooLargeATensorIsRefusedAtLoadNamingItAndTheLimit) {
  auto env = env_with(R"({"max_tensor_mb": 1})");
  ASSERT_TRUE(env);
  EXPECT_EQ(create_error(env, add_weight_model(1 << 17)), "(created)");  // 512 KiB
  const std::string error = create_error(env, add_weight_model(1 << 19));  // 2 MiB
  EXPECT_NE(error.find("initializer 'w'"), std::string::npos) << error;
  EXPECT_NE(error.find("limits.max_tensor_mb (1 MiB)"), std::string::npos) << error;
}

// Strings count by their bytes (a string tensor of 4 x 512 KiB passed a 1 MiB
// limit before: only fixed-size elements were counted).
TEST(ResourceLimits, TooLargeAStringTensorIsRefusedAtLoad) {
  auto env = env_with(R"({"max_tensor_mb": 1})");
  ASSERT_TRUE(env);
  auto model = [](size_t each) {
    ModelBuilder m;
    m.input("x", ::onnx::TensorProto::STRING, {4});
    auto* t = m.proto().mutable_graph()->add_initializer();
    t->set_name("w");
    t->set_data_type(::onnx::TensorProto::STRING);
    t->add_dims(4);
    for (int i = 0; i < 4; ++i) t->add_string_data(std::string(each, 'a' + i));
    m.node("Identity", {"w"}, {"y"});
    m.output("y", ::onnx::TensorProto::STRING, {4});
    return m.bytes();
  };
  EXPECT_EQ(create_error(env, model(64 << 10)), "(created)");  // 256 KiB of strings
  const std::string error = create_error(env, model(512 << 10));  // 2 MiB
  EXPECT_NE(error.find("initializer 'w'"), std::string::npos) << error;
  EXPECT_NE(error.find("its strings take 2097152 bytes"), std::string::npos) << error;
  EXPECT_NE(error.find("limits.max_tensor_mb (1 MiB)"), std::string::npos) << error;
}

TEST(ResourceLimits, TooLargeAModelIsRefusedNamingTheLimit) {
  auto env = env_with(R"({"max_model_mb": 1})");
  ASSERT_TRUE(env);
  EXPECT_EQ(create_error(env, add_weight_model(1 << 16)), "(created)");  // 256 KiB of weights
  const std::string error = create_error(env, add_weight_model(1 << 19));  // 2 MiB
  EXPECT_NE(error.find("limits.max_model_mb (1 MiB)"), std::string::npos) << error;
}

// A value whose static shape is known is checked at session creation: a
// 4x4 input padded by 1000 on each side makes a 16 MB Conv output from a
// 64-byte input, which a 1 MiB limit refuses before anything is compiled
// or allocated for it.
TEST(ResourceLimits, AValueWhoseStaticShapeIsOverTheLimitIsRefusedAtCreation) {
  auto env = env_with(R"({"max_tensor_mb": 1})");
  ASSERT_TRUE(env);
  auto model = [](int64_t pad) {
    ModelBuilder m;
    m.input("x", ::onnx::TensorProto::FLOAT, {1, 1, 4, 4});
    m.float_initializer("w", {1, 1, 1, 1}, {2.0f});
    auto& n = m.node("Conv", {"x", "w"}, {"y"}, "widen");
    testing::add_ints_attr(n, "pads", {pad, pad, pad, pad});
    m.output("y", ::onnx::TensorProto::FLOAT, {-1, -1, -1, -1});
    return m.bytes();
  };
  EXPECT_EQ(create_error(env, model(100)), "(created)");  // 104 x 104 floats
  const std::string error = create_error(env, model(1000));
  EXPECT_NE(error.find("node 'widen' (Conv) makes 'y'"), std::string::npos) << error;
  EXPECT_NE(error.find("[1,1,2004,2004]"), std::string::npos) << error;
  EXPECT_NE(error.find("limits.max_tensor_mb (1 MiB)"), std::string::npos) << error;
}

// y = ConstantOfShape(shape): the output's size comes from an input.
TEST(ResourceLimits, ARunMakingTooLargeATensorFailsAndTheSessionGoesOn) {
  auto env = env_with(R"({"max_tensor_mb": 1})");
  ASSERT_TRUE(env);
  ModelBuilder m;
  m.input("shape", ::onnx::TensorProto::INT64, {2});
  m.node("ConstantOfShape", {"shape"}, {"y"}, "fill");
  m.output("y", ::onnx::TensorProto::FLOAT, {-1, -1});
  auto s = Session::create_from_bytes(env, m.bytes());
  ASSERT_TRUE(s.has_value()) << s.status().message();
  auto shape = [](int64_t a, int64_t b) { return Tensor::from_vector(DType::kInt64, {2}, std::vector<int64_t>{a, b}); };
  auto big = (*s)->run({{"shape", shape(1024, 1024)}});  // 4 MiB
  ASSERT_FALSE(big.has_value());
  EXPECT_EQ(big.status().code(), StatusCode::kOutOfMemory);
  EXPECT_NE(big.status().message().find("limits.max_tensor_mb (1 MiB)"), std::string::npos) << big.status().message();
  EXPECT_NE(big.status().message().find("fill"), std::string::npos) << big.status().message();
  auto small = (*s)->run({{"shape", shape(16, 16)}});
  ASSERT_TRUE(small.has_value()) << small.status().message();
  EXPECT_EQ((*small)[0].element_count(), 256);
}

// Loop(trip_count) whose body adds 1 to a scalar: as slow as its trip count.
std::string counting_loop_model() {
  ModelBuilder m;
  m.input("trips", ::onnx::TensorProto::INT64, {});
  m.float_initializer("zero", {}, {0.0f});
  auto& loop = m.node("Loop", {"trips", "", "zero"}, {"count"}, "loop");
  ::onnx::GraphProto body;
  body.set_name("body");
  auto typed = [](::onnx::ValueInfoProto* v, const char* name, int type) {
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(type);
    v->mutable_type()->mutable_tensor_type()->mutable_shape();
  };
  typed(body.add_input(), "i", ::onnx::TensorProto::INT64);
  typed(body.add_input(), "cond_in", ::onnx::TensorProto::BOOL);
  typed(body.add_input(), "c_in", ::onnx::TensorProto::FLOAT);
  auto* one = body.add_initializer();
  one->set_name("one");
  one->set_data_type(::onnx::TensorProto::FLOAT);
  one->add_float_data(1.0f);
  auto* add = body.add_node();
  add->set_op_type("Add");
  add->add_input("c_in");
  add->add_input("one");
  add->add_output("c_out");
  auto* keep = body.add_node();
  keep->set_op_type("Identity");
  keep->add_input("cond_in");
  keep->add_output("cond_out");
  typed(body.add_output(), "cond_out", ::onnx::TensorProto::BOOL);
  typed(body.add_output(), "c_out", ::onnx::TensorProto::FLOAT);
  auto* attr = loop.add_attribute();
  attr->set_name("body");
  attr->set_type(::onnx::AttributeProto::GRAPH);
  *attr->mutable_g() = body;
  m.output("count", ::onnx::TensorProto::FLOAT, {});
  return m.bytes();
}

TEST(ResourceLimits, ARunPastItsTimeoutStopsWithTimedOutAndTheSessionGoesOn) {
  auto env = env_with(R"({"run_timeout_ms": 50})");
  ASSERT_TRUE(env);
  auto s = Session::create_from_bytes(env, counting_loop_model());
  ASSERT_TRUE(s.has_value()) << s.status().message();
  auto trips = [](int64_t n) { return Tensor::from_vector(DType::kInt64, {}, std::vector<int64_t>{n}); };
  const auto start = std::chrono::steady_clock::now();
  auto slow = (*s)->run({{"trips", trips(int64_t{1} << 40)}});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(slow.has_value());
  EXPECT_EQ(slow.status().code(), StatusCode::kTimedOut) << slow.status().message();
  EXPECT_NE(slow.status().message().find("timed out after 50 ms (limits.run_timeout_ms)"), std::string::npos)
      << slow.status().message();
  EXPECT_LT(seconds, 10.0);  // stopped inside the loop, not after 2^40 trips
  auto quick = (*s)->run({{"trips", trips(10)}});
  ASSERT_TRUE(quick.has_value()) << quick.status().message();
  EXPECT_EQ(testing::values_of((*quick)[0]), std::vector<float>{10.0f});
}

}  // namespace
}  // namespace loom

namespace loom {
namespace {

// One kernel call that would run for minutes stops at the deadline too (the
// host checks the deadline between steps; long kernels poll it): a
// 1000x1000 average window over a 1000x1000 input padded by 999 visits about
// 10^12 taps, and a 3072^3 matrix product takes 3 x 10^10 multiply-adds.
TEST(ResourceLimits, OneLongKernelCallStopsAtTheDeadline) {
  auto env = env_with(R"({"run_timeout_ms": 50})");
  ASSERT_TRUE(env);
  ModelBuilder pool;
  pool.input("x", ::onnx::TensorProto::FLOAT, {1, 1, 1000, 1000});
  auto& n = pool.node("AveragePool", {"x"}, {"y"}, "wide_window");
  testing::add_ints_attr(n, "kernel_shape", {1000, 1000});
  testing::add_ints_attr(n, "pads", {999, 999, 999, 999});
  pool.output("y", ::onnx::TensorProto::FLOAT, {-1, -1, -1, -1});
  ModelBuilder product;
  product.input("a", ::onnx::TensorProto::FLOAT, {3072, 3072});
  product.input("b", ::onnx::TensorProto::FLOAT, {3072, 3072});
  product.node("MatMul", {"a", "b"}, {"y"}, "big_product");
  product.output("y", ::onnx::TensorProto::FLOAT, {3072, 3072});
  const Tensor square = testing::float_tensor({3072, 3072}, std::vector<float>(3072 * 3072, 0.5f));
  const std::vector<std::pair<std::string, std::map<std::string, Tensor>>> cases = {
      {pool.bytes(), {{"x", testing::float_tensor({1, 1, 1000, 1000}, std::vector<float>(1000 * 1000, 1.f))}}},
      {product.bytes(), {{"a", square}, {"b", square}}},
  };
  for (const auto& [bytes, feeds] : cases) {
    auto s = Session::create_from_bytes(env, bytes);
    ASSERT_TRUE(s.has_value()) << s.status().message();
    const auto start = std::chrono::steady_clock::now();
    auto out = (*s)->run(feeds);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_FALSE(out.has_value());
    EXPECT_EQ(out.status().code(), StatusCode::kTimedOut) << out.status().message();
    EXPECT_NE(out.status().message().find("limits.run_timeout_ms"), std::string::npos) << out.status().message();
    EXPECT_LT(seconds, 10.0) << "a hang guard: the call itself would take minutes";
  }
}

}  // namespace
}  // namespace loom
