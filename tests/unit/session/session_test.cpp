// Session behaviour through the public API: bad models and inputs get clear
// errors, concurrent runs are safe, and the memory plan reports its peak.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "common/model_builder.h"
#include "common/test_env.h"

namespace loom {
namespace {

using testing::float_tensor;
using testing::values_of;

// y = Relu(x * w + b) over a chain, so buffers can be reused.
std::string chain_model(int64_t batch = 2) {
  testing::ModelBuilder m;
  m.input("x", ::onnx::TensorProto::FLOAT, {batch, 4});
  m.float_initializer("w", {4}, {1, -1, 2, 0.5f});
  m.float_initializer("b", {4}, {0.5f, 0.5f, -1, 0});
  m.node("Mul", {"x", "w"}, {"m"});
  m.node("Add", {"m", "b"}, {"a"});
  m.node("Relu", {"a"}, {"r"});
  m.node("Neg", {"r"}, {"n"});
  m.node("Neg", {"n"}, {"y"});
  m.output("y", ::onnx::TensorProto::FLOAT, {batch, 4});
  return m.bytes();
}

std::vector<float> chain_expected(const std::vector<float>& x) {
  const float w[] = {1, -1, 2, 0.5f}, b[] = {0.5f, 0.5f, -1, 0};
  std::vector<float> y;
  for (size_t i = 0; i < x.size(); ++i) y.push_back(std::max(0.0f, x[i] * w[i % 4] + b[i % 4]));
  return y;
}

TEST(SessionTest, RunsAndReportsPlannedPeak) {
  auto s = Session::create_from_bytes(testing::reference_env(), chain_model());
  ASSERT_TRUE(s.has_value()) << s.status().message();
  EXPECT_GT((*s)->planned_peak_bytes(), 0);
  // Five 32-byte intermediates, at most two alive at once (the last is a graph output).
  EXPECT_LE((*s)->planned_peak_bytes(), 2 * 64);
  std::vector<float> x = {1, 2, 3, 4, -1, -2, -3, -4};
  auto out = (*s)->run({{"x", float_tensor({2, 4}, x)}});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ(values_of((*out)[0]), chain_expected(x));
}

TEST(SessionTest, ConcurrentRunsOnOneSessionAreIndependent) {
  auto s = Session::create_from_bytes(testing::reference_env(), chain_model());
  ASSERT_TRUE(s.has_value()) << s.status().message();
  const Session& session = **s;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        std::vector<float> x(8);
        for (int k = 0; k < 8; ++k) x[k] = static_cast<float>(t * 1000 + i * 10 + k) * (k % 2 ? -1.f : 1.f);
        auto out = session.run({{"x", float_tensor({2, 4}, x)}});
        if (!out.has_value() || values_of((*out)[0]) != chain_expected(x)) ++failures;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(SessionTest, BadInputsAreRefusedNamingTheInput) {
  auto s = Session::create_from_bytes(testing::reference_env(), chain_model());
  ASSERT_TRUE(s.has_value());
  auto missing = (*s)->run({});
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.status().message().find("missing input 'x'"), std::string::npos);

  auto extra = (*s)->run({{"x", float_tensor({2, 4}, std::vector<float>(8))}, {"bogus", float_tensor({1}, {1})}});
  ASSERT_FALSE(extra.has_value());
  EXPECT_NE(extra.status().message().find("unknown input 'bogus'"), std::string::npos);

  auto dtype = (*s)->run({{"x", Tensor::from_vector(DType::kInt64, {2, 4}, std::vector<int64_t>(8))}});
  ASSERT_FALSE(dtype.has_value());
  EXPECT_NE(dtype.status().message().find("must be float, got int64"), std::string::npos);

  auto rank = (*s)->run({{"x", float_tensor({8}, std::vector<float>(8))}});
  ASSERT_FALSE(rank.has_value());
  EXPECT_NE(rank.status().message().find("rank 2"), std::string::npos);

  auto dim = (*s)->run({{"x", float_tensor({3, 4}, std::vector<float>(12))}});
  ASSERT_FALSE(dim.has_value());
  EXPECT_NE(dim.status().message().find("dimension 0 must be 2"), std::string::npos);
  EXPECT_EQ(dim.status().code(), StatusCode::kInvalidArgument);
}

// As ONNX Runtime: a 1-element tensor is taken for a scalar input (its
// JavaScript wrappers send [1]) and runs as the scalar; other ranks stay errors.
TEST(SessionTest, OneElementTensorFeedsAScalarInput) {
  testing::ModelBuilder m(17);
  m.input("x", ::onnx::TensorProto::FLOAT, {2, 2});
  m.input("k", ::onnx::TensorProto::FLOAT, {});
  m.node("Mul", {"x", "k"}, {"y"});
  m.output("y", ::onnx::TensorProto::FLOAT, {2, 2});
  auto s = Session::create_from_bytes(testing::reference_env(), m.bytes());
  ASSERT_TRUE(s.has_value()) << s.status().message();
  const Tensor x = float_tensor({2, 2}, {1, 2, 3, 4});
  for (const Dims& k : {Dims{}, Dims{1}}) {
    auto out = (*s)->run({{"x", x}, {"k", float_tensor(k, {3})}});
    ASSERT_TRUE(out.has_value()) << dims_string(k) << ": " << out.status().message();
    EXPECT_EQ(values_of((*out)[0]), (std::vector<float>{3, 6, 9, 12})) << dims_string(k);
    EXPECT_EQ((*out)[0].dims(), (Dims{2, 2})) << "the [1] feed broadcasts as the scalar it stands for";
  }
  auto two = (*s)->run({{"x", x}, {"k", float_tensor({1, 1}, {3})}});
  ASSERT_FALSE(two.has_value());
  EXPECT_NE(two.status().message().find("must have rank 0"), std::string::npos) << two.status().message();
}

TEST(SessionTest, SymbolicDimsAreResolvedAtRunTime) {
  auto s = Session::create_from_bytes(testing::reference_env(), chain_model(-1));
  ASSERT_TRUE(s.has_value()) << s.status().message();
  for (int64_t batch : {1, 3, 7}) {
    std::vector<float> x(batch * 4);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) - 5;
    auto out = (*s)->run({{"x", float_tensor({batch, 4}, x)}});
    ASSERT_TRUE(out.has_value()) << out.status().message();
    EXPECT_EQ((*out)[0].dims(), (Dims{batch, 4}));
    EXPECT_EQ(values_of((*out)[0]), chain_expected(x));
  }
}

TEST(SessionTest, UnknownOpIsRefusedNamingNodeOpDomainAndOpset) {
  testing::ModelBuilder m(13);
  m.input("x", ::onnx::TensorProto::FLOAT, {1});
  m.node("Frobnicate", {"x"}, {"y"}, "frob_node");
  m.output("y", ::onnx::TensorProto::FLOAT, {1});
  auto s = Session::create_from_bytes(testing::reference_env(), m.bytes());
  ASSERT_FALSE(s.has_value());
  const std::string msg = s.status().message();
  EXPECT_NE(msg.find("frob_node"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Frobnicate"), std::string::npos) << msg;
  EXPECT_NE(msg.find("ai.onnx"), std::string::npos) << msg;
  EXPECT_NE(msg.find("opset 13"), std::string::npos) << msg;
}

TEST(SessionTest, CustomDomainOpWithoutProviderNamesDomain) {
  testing::ModelBuilder m(13);
  m.import_domain("com.example", 1);
  m.input("x", ::onnx::TensorProto::FLOAT, {1});
  m.node("Mystery", {"x"}, {"y"}, "mystery_node", "com.example");
  m.output("y", ::onnx::TensorProto::FLOAT, {1});
  auto s = Session::create_from_bytes(testing::reference_env(), m.bytes());
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.status().message().find("com.example.Mystery"), std::string::npos) << s.status().message();
}

TEST(SessionTest, TruncatedAndNonOnnxBytesAreRefused) {
  const std::string good = chain_model();
  auto truncated = Session::create_from_bytes(testing::reference_env(), good.substr(0, good.size() / 2));
  ASSERT_FALSE(truncated.has_value());
  EXPECT_NE(truncated.status().message().find("not a valid ONNX model"), std::string::npos);
  auto garbage = Session::create_from_bytes(testing::reference_env(), "this is not a model at all");
  ASSERT_FALSE(garbage.has_value());
  auto missing = Session::create(testing::reference_env(), "/nonexistent/model.onnx");
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.status().message().find("/nonexistent/model.onnx"), std::string::npos);
}

TEST(SessionTest, ExternalDataOutsideTheModelFolderIsRefused) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(::testing::TempDir()) / "loom_external_escape" / "model";
  fs::create_directories(dir);
  std::ofstream(dir.parent_path() / "secret.bin", std::ios::binary) << std::string(16, '\1');
  testing::ModelBuilder m;
  m.input("x", ::onnx::TensorProto::FLOAT, {4});
  auto* w = m.proto().mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(::onnx::TensorProto::FLOAT);
  w->add_dims(4);
  w->set_data_location(::onnx::TensorProto::EXTERNAL);
  auto* loc = w->add_external_data();
  loc->set_key("location");
  loc->set_value("../secret.bin");
  m.node("Add", {"x", "w"}, {"y"});
  m.output("y", ::onnx::TensorProto::FLOAT, {4});
  const fs::path model = dir / "model.onnx";
  std::ofstream(model, std::ios::binary) << m.bytes();
  auto s = Session::create(testing::reference_env(), model.string());
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.status().message().find("secret.bin"), std::string::npos) << s.status().message();
}

TEST(SessionTest, MissingPluginDirectoryIsAnErrorNamingIt) {
  Config c;
  c.plugin_dirs = {"/nonexistent/loom/plugins"};
  auto env = Environment::create(c);
  ASSERT_FALSE(env.has_value());
  EXPECT_NE(env.status().message().find("/nonexistent/loom/plugins"), std::string::npos);
}

TEST(SessionTest, ConstantSubgraphsAreFoldedBeforePartitioning) {
  testing::ModelBuilder m;
  m.input("x", ::onnx::TensorProto::FLOAT, {4});
  m.float_initializer("c", {4}, {1, 2, 3, 4});
  m.node("Neg", {"c"}, {"nc"});      // constant: folded
  m.node("Identity", {"x"}, {"xi"}); // removed
  m.node("Add", {"xi", "nc"}, {"y"});
  m.output("y", ::onnx::TensorProto::FLOAT, {4});
  auto s = Session::create_from_bytes(testing::reference_env(), m.bytes());
  ASSERT_TRUE(s.has_value()) << s.status().message();
  ASSERT_EQ((*s)->placement().nodes.size(), 1u);
  EXPECT_EQ((*s)->placement().nodes[0].op_type, "Add");
  auto out = (*s)->run({{"x", float_tensor({4}, {1, 1, 1, 1})}});
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(values_of((*out)[0]), (std::vector<float>{0, -1, -2, -3}));
}

// A graph input with an initializer is an overridable initializer, as in
// ONNX Runtime: listed apart from the inputs a run must feed, and taken from
// the run when fed, else from the model.
TEST(SessionTest, OverridableInitializersAreListedAndMayBeFed) {
  testing::ModelBuilder m;
  m.input("x", ::onnx::TensorProto::FLOAT, {2});
  m.input("scale", ::onnx::TensorProto::FLOAT, {2});
  m.float_initializer("scale", {2}, {2, 3});
  m.node("Mul", {"x", "scale"}, {"y"});
  m.output("y", ::onnx::TensorProto::FLOAT, {2});
  auto s = Session::create_from_bytes(testing::reference_env(), m.bytes());
  ASSERT_TRUE(s.has_value()) << s.status().message();
  ASSERT_EQ((*s)->inputs().size(), 1u);
  EXPECT_EQ((*s)->inputs()[0].name, "x");
  ASSERT_EQ((*s)->overridable_initializers().size(), 1u);
  const ValueInfo& scale = (*s)->overridable_initializers()[0];
  EXPECT_EQ(scale.name, "scale");
  EXPECT_EQ(scale.dtype, DType::kFloat);
  ASSERT_TRUE(scale.has_shape);
  EXPECT_EQ(scale.shape.size(), 1u);
  auto from_model = (*s)->run({{"x", float_tensor({2}, {1, 1})}});
  ASSERT_TRUE(from_model.has_value()) << from_model.status().message();
  EXPECT_EQ(values_of((*from_model)[0]), (std::vector<float>{2, 3}));
  auto fed = (*s)->run({{"x", float_tensor({2}, {1, 1})}, {"scale", float_tensor({2}, {5, 7})}});
  ASSERT_TRUE(fed.has_value()) << fed.status().message();
  EXPECT_EQ(values_of((*fed)[0]), (std::vector<float>{5, 7}));
}

}  // namespace
}  // namespace loom
