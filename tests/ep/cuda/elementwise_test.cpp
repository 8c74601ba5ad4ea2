// The CUDA EP's element-wise family against the reference EP: every unary
// op, binary ops with each broadcast shape, the variadic ops, Where, Clip,
// Cast, and the com.microsoft GELU family, in float and float16 (and the
// integer and bool types the ops claim).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "ep/cuda/cuda_compare.h"

namespace loom {
namespace {

using namespace cuda_testing;

// y = op(x) on one input of `type` and `dims`, with the given attributes.
std::string unary_model(const std::string& op, int32_t type, const std::vector<int64_t>& dims,
                        const std::function<void(::onnx::NodeProto&)>& attrs = nullptr, int64_t opset = 17,
                        const std::string& domain = "", int32_t out_type = -1) {
  testing::ModelBuilder m(opset);
  if (!domain.empty()) m.import_domain(domain, 1);
  m.input("x", type, dims);
  auto& n = m.node(op, {"x"}, {"y"}, "node", domain);
  if (attrs) attrs(n);
  m.output("y", out_type < 0 ? type : out_type, dims);
  return m.bytes();
}

TEST(CudaElementwise, UnaryFloatOps) {
  LOOM_SKIP_WITHOUT_GPU();
  const std::vector<int64_t> dims = {3, 37, 129};
  struct Case {
    const char* op;
    float lo, hi;
    int64_t opset;
  };
  const Case cases[] = {{"Relu", -2, 2, 17},     {"Sigmoid", -6, 6, 17},  {"Tanh", -3, 3, 17},
                        {"Exp", -4, 4, 17},      {"Log", 0.01f, 5, 17},   {"Sqrt", 0.01f, 9, 17},
                        {"Reciprocal", 0.1f, 3, 17}, {"Neg", -2, 2, 17},  {"Abs", -2, 2, 17},
                        {"Erf", -3, 3, 17},      {"Floor", -5, 5, 17},    {"Ceil", -5, 5, 17},
                        {"Round", -5, 5, 17},    {"Sin", -3, 3, 17},      {"Cos", -3, 3, 17},
                        {"Tan", -1, 1, 17},      {"Asin", -0.9f, 0.9f, 17}, {"Acos", -0.9f, 0.9f, 17},
                        {"Atan", -3, 3, 17},     {"Sinh", -2, 2, 17},     {"Cosh", -2, 2, 17},
                        {"Asinh", -3, 3, 17},    {"Acosh", 1.1f, 4, 17},  {"Atanh", -0.9f, 0.9f, 17},
                        {"Softplus", -30, 30, 17}, {"Softsign", -3, 3, 17}, {"Sign", -2, 2, 17},
                        {"HardSigmoid", -5, 5, 17}, {"HardSwish", -5, 5, 17}, {"LeakyRelu", -2, 2, 17},
                        {"Elu", -3, 3, 17},      {"Selu", -3, 3, 17},     {"Celu", -3, 3, 17},
                        {"ThresholdedRelu", -2, 2, 17}};
  // Mish (opset 18) and Gelu (opset 20) are registered too, but models at
  // those opsets do not load until the op registry knows them (issue 29).
  for (const Case& c : cases) {
    const Tensor x = random_tensor(DType::kFloat, dims, 7, c.lo, c.hi);
    expect_matches_reference(unary_model(c.op, kFloat, dims, nullptr, c.opset), {{"x", x}}, {1e-5, 1e-6}, c.op);
  }
}

TEST(CudaElementwise, UnaryAttributes) {
  LOOM_SKIP_WITHOUT_GPU();
  const std::vector<int64_t> dims = {2, 301};
  const Tensor x = random_tensor(DType::kFloat, dims, 11, -4, 4);
  expect_matches_reference(unary_model("LeakyRelu", kFloat, dims, [](auto& n) { testing::add_float_attr(n, "alpha", 0.3f); }),
                           {{"x", x}}, {}, "LeakyRelu alpha");
  expect_matches_reference(unary_model("Elu", kFloat, dims, [](auto& n) { testing::add_float_attr(n, "alpha", 0.5f); }),
                           {{"x", x}}, {}, "Elu alpha");
  expect_matches_reference(unary_model("HardSigmoid", kFloat, dims,
                                       [](auto& n) {
                                         testing::add_float_attr(n, "alpha", 0.3f);
                                         testing::add_float_attr(n, "beta", 0.4f);
                                       }),
                           {{"x", x}}, {}, "HardSigmoid alpha beta");
  expect_matches_reference(unary_model("ThresholdedRelu", kFloat, dims, [](auto& n) { testing::add_float_attr(n, "alpha", 0.7f); }),
                           {{"x", x}}, {}, "ThresholdedRelu alpha");
}

TEST(CudaElementwise, UnaryFloat16AndIntegers) {
  LOOM_SKIP_WITHOUT_GPU();
  const std::vector<int64_t> dims = {5, 67};
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "Exp", "Neg", "Abs", "Erf", "HardSwish", "Softplus"}) {
    const Tensor x = random_tensor(DType::kFloat16, dims, 3, -3, 3);
    expect_matches_reference(unary_model(op, kFloat16, dims), {{"x", x}}, kHalfTolerance, std::string(op) + " fp16");
  }
  for (const char* op : {"Relu", "Neg", "Abs", "Sign"}) {
    const Tensor x = random_tensor(DType::kInt64, dims, 5, -50, 50);
    expect_matches_reference(unary_model(op, kInt64, dims), {{"x", x}}, {}, std::string(op) + " int64");
    const Tensor x32 = random_tensor(DType::kInt32, dims, 6, -50, 50);
    expect_matches_reference(unary_model(op, kInt32, dims), {{"x", x32}}, {}, std::string(op) + " int32");
  }
  const Tensor b = random_tensor(DType::kBool, dims, 9);
  expect_matches_reference(unary_model("Not", kBool, dims), {{"x", b}}, {}, "Not");
  std::vector<float> special = {1.f, -1.f, std::nanf(""), INFINITY, -INFINITY, 0.5f};
  const Tensor s = Tensor::from_vector(DType::kFloat, {6}, special);
  expect_matches_reference(unary_model("IsNaN", kFloat, {6}, nullptr, 17, "", kBool), {{"x", s}}, {}, "IsNaN");
  expect_matches_reference(unary_model("IsInf", kFloat, {6}, [](auto& n) { testing::add_int_attr(n, "detect_negative", 0); },
                                       17, "", kBool),
                           {{"x", s}}, {}, "IsInf positive only");
}

TEST(CudaElementwise, ZeroElements) {
  LOOM_SKIP_WITHOUT_GPU();
  const Tensor x = Tensor::from_vector(DType::kFloat, {3, 0}, std::vector<float>{});
  expect_matches_reference(unary_model("Relu", kFloat, {3, 0}), {{"x", x}}, {}, "Relu empty");
}

std::string binary_model(const std::string& op, int32_t type, const std::vector<int64_t>& a,
                         const std::vector<int64_t>& b, const std::vector<int64_t>& out, int32_t out_type,
                         int64_t opset = 17) {
  testing::ModelBuilder m(opset);
  m.input("a", type, a);
  m.input("b", type, b);
  m.node(op, {"a", "b"}, {"y"}, "node");
  m.output("y", out_type, out);
  return m.bytes();
}

struct Shapes {
  std::vector<int64_t> a, b, out;
};
const Shapes kBroadcasts[] = {
    {{4, 33, 17}, {4, 33, 17}, {4, 33, 17}},  // same shape
    {{4, 33, 17}, {17}, {4, 33, 17}},         // trailing vector
    {{4, 33, 17}, {1}, {4, 33, 17}},          // scalar-like
    {{4, 1, 17}, {1, 33, 1}, {4, 33, 17}},    // both ways
    {{33, 1}, {2, 3, 1, 7}, {2, 3, 33, 7}},   // rank differs
    {{2, 1, 3, 1, 5}, {2, 4, 3, 6, 1}, {2, 4, 3, 6, 5}},
};

TEST(CudaElementwise, BinaryArithmeticBroadcasts) {
  LOOM_SKIP_WITHOUT_GPU();
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Max", "Min"})
    for (const Shapes& s : kBroadcasts) {
      const Tensor a = random_tensor(DType::kFloat, s.a, 1, -2, 2), b = random_tensor(DType::kFloat, s.b, 2, 0.5f, 2);
      expect_matches_reference(binary_model(op, kFloat, s.a, s.b, s.out, kFloat), {{"a", a}, {"b", b}}, {},
                               std::string(op) + " broadcast rank " + std::to_string(s.out.size()));
    }
  const Shapes& s = kBroadcasts[3];
  const Tensor a = random_tensor(DType::kFloat, s.a, 3, 0.1f, 3), b = random_tensor(DType::kFloat, s.b, 4, -2, 2);
  expect_matches_reference(binary_model("Pow", kFloat, s.a, s.b, s.out, kFloat), {{"a", a}, {"b", b}}, {1e-5, 1e-6}, "Pow");
  expect_matches_reference(binary_model("PRelu", kFloat, {4, 33, 17}, {17}, {4, 33, 17}, kFloat),
                           {{"a", random_tensor(DType::kFloat, {4, 33, 17}, 5)}, {"b", random_tensor(DType::kFloat, {17}, 6)}},
                           {}, "PRelu");
}

TEST(CudaElementwise, BinaryTypes) {
  LOOM_SKIP_WITHOUT_GPU();
  const Shapes& s = kBroadcasts[3];
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    expect_matches_reference(binary_model(op, kFloat16, s.a, s.b, s.out, kFloat16),
                             {{"a", random_tensor(DType::kFloat16, s.a, 1, -2, 2)},
                              {"b", random_tensor(DType::kFloat16, s.b, 2, 0.5f, 2)}},
                             kHalfTolerance, std::string(op) + " fp16");
    expect_matches_reference(binary_model(op, kInt64, s.a, s.b, s.out, kInt64),
                             {{"a", random_tensor(DType::kInt64, s.a, 1, -100, 100)},
                              {"b", random_tensor(DType::kInt64, s.b, 2, 1, 9)}},
                             {}, std::string(op) + " int64");
    expect_matches_reference(binary_model(op, kInt32, s.a, s.b, s.out, kInt32),
                             {{"a", random_tensor(DType::kInt32, s.a, 3, -100, 100)},
                              {"b", random_tensor(DType::kInt32, s.b, 4, 1, 9)}},
                             {}, std::string(op) + " int32");
  }
  // Mod: integer (sign of the divisor) and float fmod.
  testing::ModelBuilder m;
  m.input("a", kInt64, s.a);
  m.input("b", kInt64, s.b);
  m.node("Mod", {"a", "b"}, {"y"}, "mod");
  m.output("y", kInt64, s.out);
  expect_matches_reference(m.bytes(),
                           {{"a", random_tensor(DType::kInt64, s.a, 5, -50, 50)},
                            {"b", random_tensor(DType::kInt64, s.b, 6, 2, 7)}},
                           {}, "Mod int64");
  testing::ModelBuilder f;
  f.input("a", kFloat, s.a);
  f.input("b", kFloat, s.b);
  testing::add_int_attr(f.node("Mod", {"a", "b"}, {"y"}, "fmod"), "fmod", 1);
  f.output("y", kFloat, s.out);
  expect_matches_reference(f.bytes(),
                           {{"a", random_tensor(DType::kFloat, s.a, 7, -5, 5)},
                            {"b", random_tensor(DType::kFloat, s.b, 8, 0.5f, 2)}},
                           {}, "Mod fmod");
}

// Floats that are small integers (-3..3), so comparisons meet equal values.
Tensor small_int_floats(const std::vector<int64_t>& dims, uint32_t seed) {
  const Tensor i = random_tensor(DType::kInt64, dims, seed, -3, 3);
  std::vector<float> f(static_cast<size_t>(i.element_count()));
  for (size_t k = 0; k < f.size(); ++k) f[k] = static_cast<float>(i.data_as<int64_t>()[k]);
  return Tensor::from_vector(DType::kFloat, dims, f);
}

TEST(CudaElementwise, ComparisonsAndLogic) {
  LOOM_SKIP_WITHOUT_GPU();
  const Shapes& s = kBroadcasts[1];
  for (const char* op : {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"}) {
    // Small integers as floats, so equality happens.
    expect_matches_reference(binary_model(op, kFloat, s.a, s.b, s.out, kBool),
                             {{"a", small_int_floats(s.a, 1)}, {"b", small_int_floats(s.b, 2)}}, {},
                             std::string(op) + " float");
    expect_matches_reference(binary_model(op, kInt64, s.a, s.b, s.out, kBool),
                             {{"a", random_tensor(DType::kInt64, s.a, 1, -3, 3)}, {"b", random_tensor(DType::kInt64, s.b, 2, -3, 3)}},
                             {}, std::string(op) + " int64");
  }
  for (const char* op : {"And", "Or", "Xor"})
    expect_matches_reference(binary_model(op, kBool, s.a, s.b, s.out, kBool),
                             {{"a", random_tensor(DType::kBool, s.a, 3)}, {"b", random_tensor(DType::kBool, s.b, 4)}}, {},
                             op);
}

TEST(CudaElementwise, VariadicOps) {
  LOOM_SKIP_WITHOUT_GPU();
  for (const char* op : {"Sum", "Mean", "Max", "Min"}) {
    testing::ModelBuilder m;
    m.input("a", kFloat, {3, 1, 5});
    m.input("b", kFloat, {4, 5});
    m.input("c", kFloat, {1});
    m.node(op, {"a", "b", "c"}, {"y"}, "node");
    m.output("y", kFloat, {3, 4, 5});
    expect_matches_reference(m.bytes(),
                             {{"a", random_tensor(DType::kFloat, {3, 1, 5}, 1)},
                              {"b", random_tensor(DType::kFloat, {4, 5}, 2)},
                              {"c", random_tensor(DType::kFloat, {1}, 3)}},
                             {}, std::string(op) + " of three");
    testing::ModelBuilder one;
    one.input("a", kFloat, {7});
    one.node(op, {"a"}, {"y"}, "node");
    one.output("y", kFloat, {7});
    expect_matches_reference(one.bytes(), {{"a", random_tensor(DType::kFloat, {7}, 4)}}, {}, std::string(op) + " of one");
  }
}

TEST(CudaElementwise, WhereClipCast) {
  LOOM_SKIP_WITHOUT_GPU();
  testing::ModelBuilder w;
  w.input("c", kBool, {4, 1, 9});
  w.input("x", kFloat, {3, 9});
  w.input("z", kFloat, {4, 3, 1});
  w.node("Where", {"c", "x", "z"}, {"y"}, "where");
  w.output("y", kFloat, {4, 3, 9});
  expect_matches_reference(w.bytes(),
                           {{"c", random_tensor(DType::kBool, {4, 1, 9}, 1)},
                            {"x", random_tensor(DType::kFloat, {3, 9}, 2)},
                            {"z", random_tensor(DType::kFloat, {4, 3, 1}, 3)}},
                           {}, "Where");
  testing::ModelBuilder wi;
  wi.input("c", kBool, {6});
  wi.input("x", kInt64, {6});
  wi.input("z", kInt64, {1});
  wi.node("Where", {"c", "x", "z"}, {"y"}, "where");
  wi.output("y", kInt64, {6});
  expect_matches_reference(wi.bytes(),
                           {{"c", random_tensor(DType::kBool, {6}, 4)},
                            {"x", random_tensor(DType::kInt64, {6}, 5, -9, 9)},
                            {"z", random_tensor(DType::kInt64, {1}, 6, -9, 9)}},
                           {}, "Where int64");

  // Clip 11+: bounds as constant inputs (host), one omitted; Clip 6: attributes.
  testing::ModelBuilder c;
  c.input("x", kFloat, {5, 41});
  c.float_initializer("lo", {}, {-0.25f});
  c.node("Clip", {"x", "lo"}, {"y"}, "clip");
  c.output("y", kFloat, {5, 41});
  expect_matches_reference(c.bytes(), {{"x", random_tensor(DType::kFloat, {5, 41}, 7)}}, {}, "Clip min only");
  testing::ModelBuilder c6(6);
  c6.input("x", kFloat, {5, 41});
  auto& n6 = c6.node("Clip", {"x"}, {"y"}, "clip");
  testing::add_float_attr(n6, "min", -0.5f);
  testing::add_float_attr(n6, "max", 0.25f);
  c6.output("y", kFloat, {5, 41});
  expect_matches_reference(c6.bytes(), {{"x", random_tensor(DType::kFloat, {5, 41}, 8)}}, {}, "Clip opset 6");

  const std::pair<DType, int32_t> types[] = {{DType::kFloat, kFloat}, {DType::kFloat16, kFloat16},
                                             {DType::kInt64, kInt64}, {DType::kInt32, kInt32}, {DType::kBool, kBool}};
  for (const auto& [from, from_onnx] : types)
    for (const auto& [to, to_onnx] : types) {
      testing::ModelBuilder m;
      m.input("x", from_onnx, {3, 50});
      testing::add_int_attr(m.node("Cast", {"x"}, {"y"}, "cast"), "to", to_onnx);
      m.output("y", to_onnx, {3, 50});
      expect_matches_reference(m.bytes(), {{"x", random_tensor(from, {3, 50}, 9, -20, 20)}}, {},
                               "Cast " + dtype_name(from) + " -> " + dtype_name(to));
    }
}

TEST(CudaElementwise, ContribGelus) {
  LOOM_SKIP_WITHOUT_GPU();
  const std::vector<int64_t> dims = {2, 7, 96};
  const Tensor x = random_tensor(DType::kFloat, dims, 1, -4, 4), bias = random_tensor(DType::kFloat, {96}, 2);
  for (const char* op : {"FastGelu", "BiasGelu"}) {
    testing::ModelBuilder m;
    m.import_domain("com.microsoft", 1);
    m.input("x", kFloat, dims);
    m.input("bias", kFloat, {96});
    m.node(op, {"x", "bias"}, {"y"}, "node", "com.microsoft");
    m.output("y", kFloat, dims);
    expect_matches_reference(m.bytes(), {{"x", x}, {"bias", bias}}, {1e-5, 1e-6}, op);
  }
  expect_matches_reference(unary_model("FastGelu", kFloat, dims, nullptr, 17, "com.microsoft"), {{"x", x}}, {1e-5, 1e-6},
                           "FastGelu without bias");
  expect_matches_reference(unary_model("Gelu", kFloat, dims, nullptr, 17, "com.microsoft"), {{"x", x}}, {1e-5, 1e-6},
                           "com.microsoft Gelu");
  expect_matches_reference(unary_model("QuickGelu", kFloat, dims,
                                       [](auto& n) { testing::add_float_attr(n, "alpha", 1.5f); }, 17, "com.microsoft"),
                           {{"x", x}}, {1e-5, 1e-6}, "QuickGelu alpha 1.5");
  expect_matches_reference(unary_model("QuickGelu", kFloat, dims, nullptr, 17, "com.microsoft"), {{"x", x}},
                           {1e-5, 1e-6}, "QuickGelu default alpha");
}

}  // namespace
}  // namespace loom
