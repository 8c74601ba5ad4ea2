// Random generators of the reference EP (RandomUniform, RandomNormal, their
// *Like forms, Bernoulli) through the public API. Their numbers cannot match
// the ONNX suite's (numpy's generator), so these tests check distributions
// statistically on large seeded samples, seed determinism, fresh numbers
// without a seed, and output shapes and dtypes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "common/model_builder.h"
#include "common/test_env.h"

namespace loom {
namespace {

using ::onnx::AttributeProto;
using ::onnx::NodeProto;
using ::onnx::TensorProto;

constexpr int64_t kSamples = 200000;

std::unique_ptr<Session> session_of(const std::string& bytes) {
  auto s = Session::create_from_bytes(testing::reference_env(), bytes);
  EXPECT_TRUE(s.has_value()) << s.status().message();
  return s.has_value() ? std::move(*s) : nullptr;
}

Tensor run_one(Session& s, std::map<std::string, Tensor> inputs = {}) {
  auto out = s.run(inputs);
  EXPECT_TRUE(out.has_value()) << out.status().message();
  return out.has_value() ? (*out)[0] : Tensor();
}

double half_to_double(uint16_t h) {
  const int exponent = (h >> 10) & 0x1F, mantissa = h & 0x3FF;
  const double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  if (exponent == 31) return mantissa ? NAN : sign * INFINITY;
  return sign * std::ldexp(1024 + mantissa, exponent - 25);
}

// Elements of a float, double or float16 tensor as doubles.
std::vector<double> as_doubles(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.element_count()));
  for (size_t i = 0; i < v.size(); ++i) {
    switch (t.dtype()) {
      case DType::kFloat: v[i] = t.data_as<float>()[i]; break;
      case DType::kDouble: v[i] = t.data_as<double>()[i]; break;
      case DType::kFloat16: v[i] = half_to_double(t.data_as<uint16_t>()[i]); break;
      case DType::kInt64: v[i] = static_cast<double>(t.data_as<int64_t>()[i]); break;
      case DType::kBool: v[i] = t.data_as<bool>()[i] ? 1 : 0; break;
      default: ADD_FAILURE() << "unexpected dtype " << dtype_name(t.dtype());
    }
  }
  return v;
}

struct Moments {
  double mean = 0, variance = 0, min = INFINITY, max = -INFINITY;
};
Moments moments(const std::vector<double>& v) {
  Moments m;
  for (double x : v) {
    m.mean += x;
    m.min = std::min(m.min, x);
    m.max = std::max(m.max, x);
  }
  m.mean /= static_cast<double>(v.size());
  for (double x : v) m.variance += (x - m.mean) * (x - m.mean);
  m.variance /= static_cast<double>(v.size());
  return m;
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.byte_size() == b.byte_size() && std::memcmp(a.data(), b.data(), a.byte_size()) == 0;
}

// RandomUniform/RandomNormal of shape [kSamples] (or `shape`).
std::string generator_model(const std::string& op, int32_t dtype, std::optional<float> seed, float p1, float p2,
                            std::vector<int64_t> shape = {kSamples}) {
  testing::ModelBuilder m(17);
  NodeProto& n = m.node(op, {}, {"y"});
  testing::add_int_attr(n, "dtype", dtype);
  testing::add_ints_attr(n, "shape", shape);
  testing::add_float_attr(n, op == "RandomUniform" ? "low" : "mean", p1);
  testing::add_float_attr(n, op == "RandomUniform" ? "high" : "scale", p2);
  if (seed) testing::add_float_attr(n, "seed", *seed);
  m.output("y", dtype, shape);
  return m.bytes();
}

TEST(RandomKernelTest, RandomUniformHasUniformMoments) {
  auto s = session_of(generator_model("RandomUniform", TensorProto::FLOAT, 7.0f, -2.0f, 3.0f));
  ASSERT_TRUE(s);
  Tensor y = run_one(*s);
  EXPECT_EQ(y.dtype(), DType::kFloat);
  EXPECT_EQ(y.dims(), (Dims{kSamples}));
  const Moments m = moments(as_doubles(y));
  EXPECT_NEAR(m.mean, 0.5, 0.02);
  EXPECT_NEAR(m.variance, 25.0 / 12.0, 0.03);
  EXPECT_GE(m.min, -2.0);
  EXPECT_LT(m.max, 3.0);
  EXPECT_LT(m.min, -1.99);
  EXPECT_GT(m.max, 2.99);
}

TEST(RandomKernelTest, RandomNormalHasNormalMoments) {
  auto s = session_of(generator_model("RandomNormal", TensorProto::DOUBLE, 3.0f, 1.5f, 2.0f));
  ASSERT_TRUE(s);
  Tensor y = run_one(*s);
  EXPECT_EQ(y.dtype(), DType::kDouble);
  const std::vector<double> v = as_doubles(y);
  const Moments m = moments(v);
  EXPECT_NEAR(m.mean, 1.5, 0.02);
  EXPECT_NEAR(m.variance, 4.0, 0.06);
  // About 68.3% within one standard deviation.
  int64_t within = 0;
  for (double x : v) within += std::fabs(x - 1.5) < 2.0;
  EXPECT_NEAR(static_cast<double>(within) / kSamples, 0.6827, 0.005);
}

TEST(RandomKernelTest, Float16OutputAndMultiDimShape) {
  auto s = session_of(generator_model("RandomUniform", TensorProto::FLOAT16, 1.0f, 0.0f, 1.0f, {2, 3, 4}));
  ASSERT_TRUE(s);
  Tensor y = run_one(*s);
  EXPECT_EQ(y.dtype(), DType::kFloat16);
  EXPECT_EQ(y.dims(), (Dims{2, 3, 4}));
  for (double x : as_doubles(y)) {
    EXPECT_GE(x, 0.0);
    EXPECT_LE(x, 1.0);
  }
}

TEST(RandomKernelTest, SeedMakesOutputDeterministic) {
  const std::string seeded = generator_model("RandomNormal", TensorProto::FLOAT, 42.0f, 0.0f, 1.0f, {1000});
  auto a = session_of(seeded);
  auto b = session_of(seeded);
  auto other = session_of(generator_model("RandomNormal", TensorProto::FLOAT, 43.0f, 0.0f, 1.0f, {1000}));
  ASSERT_TRUE(a && b && other);
  const Tensor first = run_one(*a);
  EXPECT_TRUE(same_bytes(first, run_one(*a)));  // same session, next run
  EXPECT_TRUE(same_bytes(first, run_one(*b)));  // another session
  EXPECT_FALSE(same_bytes(first, run_one(*other)));
}

TEST(RandomKernelTest, NoSeedGivesFreshNumbersEachRun) {
  auto s = session_of(generator_model("RandomUniform", TensorProto::FLOAT, std::nullopt, 0.0f, 1.0f, {1000}));
  ASSERT_TRUE(s);
  const Tensor a = run_one(*s), b = run_one(*s);
  EXPECT_FALSE(same_bytes(a, b));
}

// RandomUniformLike / RandomNormalLike over input x.
std::string like_model(const std::string& op, int32_t in_dtype, std::optional<int32_t> dtype,
                       std::optional<float> seed) {
  testing::ModelBuilder m(17);
  m.input("x", in_dtype, {-1, -1});
  NodeProto& n = m.node(op, {"x"}, {"y"});
  if (dtype) testing::add_int_attr(n, "dtype", *dtype);
  if (seed) testing::add_float_attr(n, "seed", *seed);
  if (op == "RandomUniformLike") {
    testing::add_float_attr(n, "low", 10.0f);
    testing::add_float_attr(n, "high", 12.0f);
  } else {
    testing::add_float_attr(n, "mean", -3.0f);
    testing::add_float_attr(n, "scale", 0.5f);
  }
  m.output("y", dtype.value_or(in_dtype), {-1, -1});
  return m.bytes();
}

TEST(RandomKernelTest, LikeOpsTakeShapeAndDtypeFromInput) {
  auto u = session_of(like_model("RandomUniformLike", TensorProto::DOUBLE, std::nullopt, 5.0f));
  ASSERT_TRUE(u);
  Tensor x = Tensor::from_vector(DType::kDouble, {400, 500}, std::vector<double>(kSamples, 0.0));
  Tensor y = run_one(*u, {{"x", x}});
  EXPECT_EQ(y.dtype(), DType::kDouble);
  EXPECT_EQ(y.dims(), (Dims{400, 500}));
  Moments m = moments(as_doubles(y));
  EXPECT_NEAR(m.mean, 11.0, 0.01);
  EXPECT_NEAR(m.variance, 4.0 / 12.0, 0.01);
  EXPECT_GE(m.min, 10.0);
  EXPECT_LT(m.max, 12.0);

  // dtype overrides the input's type; the input may be any type.
  auto n = session_of(like_model("RandomNormalLike", TensorProto::INT64, TensorProto::FLOAT, 5.0f));
  ASSERT_TRUE(n);
  Tensor xi = Tensor::from_vector(DType::kInt64, {kSamples / 4, 4}, std::vector<int64_t>(kSamples, 1));
  y = run_one(*n, {{"x", xi}});
  EXPECT_EQ(y.dtype(), DType::kFloat);
  EXPECT_EQ(y.dims(), (Dims{kSamples / 4, 4}));
  m = moments(as_doubles(y));
  EXPECT_NEAR(m.mean, -3.0, 0.01);
  EXPECT_NEAR(m.variance, 0.25, 0.005);
}

TEST(RandomKernelTest, LikeOpWithoutDtypeRefusesIntegerInput) {
  auto s = Session::create_from_bytes(testing::reference_env(),
                                      like_model("RandomUniformLike", TensorProto::INT32, std::nullopt, 1.0f));
  if (!s.has_value()) {  // refused while loading: also fine, as long as it says why
    EXPECT_NE(s.status().message().find("RandomUniformLike"), std::string::npos) << s.status().message();
    return;
  }
  auto out = (*s)->run({{"x", Tensor::from_vector(DType::kInt32, {1, 2}, std::vector<int32_t>{1, 2})}});
  ASSERT_FALSE(out.has_value());
  EXPECT_NE(out.status().message().find("RandomUniformLike"), std::string::npos) << out.status().message();
}

std::string bernoulli_model(int32_t in_dtype, std::optional<int32_t> dtype, std::optional<float> seed) {
  testing::ModelBuilder m(15);
  m.input("p", in_dtype, {-1});
  NodeProto& n = m.node("Bernoulli", {"p"}, {"y"});
  if (dtype) testing::add_int_attr(n, "dtype", *dtype);
  if (seed) testing::add_float_attr(n, "seed", *seed);
  m.output("y", dtype.value_or(in_dtype), {-1});
  return m.bytes();
}

TEST(RandomKernelTest, BernoulliDrawsOnesAtRateP) {
  auto s = session_of(bernoulli_model(TensorProto::FLOAT, std::nullopt, 11.0f));
  ASSERT_TRUE(s);
  // Thirds of the input: p = 0, p = 0.3, p = 1.
  const int64_t third = 60000;
  std::vector<float> p(3 * third, 0.3f);
  std::fill(p.begin(), p.begin() + third, 0.0f);
  std::fill(p.begin() + 2 * third, p.end(), 1.0f);
  Tensor y = run_one(*s, {{"p", testing::float_tensor({3 * third}, p)}});
  EXPECT_EQ(y.dtype(), DType::kFloat);
  const std::vector<double> v = as_doubles(y);
  double zeros_part = 0, mid = 0, ones_part = 0;
  for (int64_t i = 0; i < 3 * third; ++i) {
    EXPECT_TRUE(v[i] == 0.0 || v[i] == 1.0);
    (i < third ? zeros_part : i < 2 * third ? mid : ones_part) += v[i];
  }
  EXPECT_EQ(zeros_part, 0.0);
  EXPECT_EQ(ones_part, static_cast<double>(third));
  EXPECT_NEAR(mid / third, 0.3, 0.01);
}

TEST(RandomKernelTest, BernoulliDtypeAttributeAndSeed) {
  for (int32_t dtype : {TensorProto::INT64, TensorProto::BOOL, TensorProto::DOUBLE}) {
    const std::string model = bernoulli_model(TensorProto::DOUBLE, dtype, 5.0f);
    auto a = session_of(model);
    auto b = session_of(model);
    ASSERT_TRUE(a && b);
    Tensor p = Tensor::from_vector(DType::kDouble, {10000}, std::vector<double>(10000, 0.75));
    Tensor y = run_one(*a, {{"p", p}});
    EXPECT_EQ(static_cast<int32_t>(y.dtype()), dtype);
    EXPECT_EQ(y.dims(), (Dims{10000}));
    EXPECT_NEAR(moments(as_doubles(y)).mean, 0.75, 0.02);
    EXPECT_TRUE(same_bytes(y, run_one(*b, {{"p", p}})));
  }
}

TEST(RandomKernelTest, BernoulliWithoutSeedVaries) {
  auto s = session_of(bernoulli_model(TensorProto::FLOAT, std::nullopt, std::nullopt));
  ASSERT_TRUE(s);
  Tensor p = testing::float_tensor({1000}, std::vector<float>(1000, 0.5f));
  EXPECT_FALSE(same_bytes(run_one(*s, {{"p", p}}), run_one(*s, {{"p", p}})));
}

}  // namespace
}  // namespace loom
