// The cuda option precision=fp16: a float32 model's convolutions and matrix
// products compute on float16 copies of their operands (float accumulation)
// and still take and give float32. Checked against the float32 reference EP
// within float16's precision, and against the EP's own float32 results to
// show the float16 path ran (it cannot match them to the last bits).
#include <gtest/gtest.h>

#include <functional>

#include "ep/cuda/cuda_compare.h"

namespace loom {
namespace {

using namespace cuda_testing;

// cuda alone (fallback denied) at `level`, with `fill` setting the rest.
std::shared_ptr<Environment> cuda_only(OptimizationLevel level, const std::function<void(Config&)>& fill) {
  Config c;
  c.providers = {"cuda"};
  c.fallback = FallbackPolicy::kDeny;
  c.optimization_level = level;
  fill(c);
  return testing::make_env(c);
}

std::shared_ptr<Environment> fp16_env() {
  static auto env = cuda_only(OptimizationLevel::kDisabled,
                              [](Config& c) { c.provider_options["cuda"] = {{"precision", "fp16"}}; });
  return env;
}

constexpr Tolerance kFp16Mode{2e-2, 2e-2};

// Runs `model` in fp16 mode, in float32 on cuda and on the reference:
// fp16 within kFp16Mode of the reference, and not bit-equal to float32.
void expect_fp16_mode(const std::string& model, const std::map<std::string, Tensor>& inputs, const std::string& what) {
  auto half = make_session(fp16_env(), model);
  auto single = make_session(cuda_env(), model);
  auto reference = make_session(reference_env(), model);
  ASSERT_TRUE(half && single && reference) << what;
  auto h = half->run(inputs);
  auto s = single->run(inputs);
  auto r = reference->run(inputs);
  ASSERT_TRUE(h.has_value()) << what << ": " << h.status().message();
  ASSERT_TRUE(s.has_value() && r.has_value()) << what;
  ASSERT_EQ((*h)[0].dtype(), DType::kFloat) << what << ": fp16 mode keeps float32 outputs";
  expect_close((*r)[0], (*h)[0], kFp16Mode, what + " (fp16 mode vs reference)");
  double max_diff = 0;
  for (int64_t i = 0; i < (*s)[0].element_count(); ++i)
    max_diff = std::max(max_diff, std::fabs(element((*s)[0], i) - element((*h)[0], i)));
  EXPECT_GT(max_diff, 1e-6) << what << ": fp16 mode gave the float32 results bit for bit (the float16 path did not run?)";
}

// `op` over x (input) and a constant or input W, into y.
std::string product_model(const std::string& op, const std::vector<int64_t>& x, const std::vector<int64_t>& w,
                          const std::vector<int64_t>& y, bool constant_w,
                          const std::function<void(::onnx::NodeProto&)>& attrs = nullptr, bool bias = false) {
  testing::ModelBuilder m;
  m.input("x", kFloat, x);
  const Tensor wt = random_tensor(DType::kFloat, w, 5, -0.2f, 0.2f);
  if (constant_w) m.float_initializer("w", w, std::vector<float>(wt.data_as<float>(), wt.data_as<float>() + wt.element_count()));
  else m.input("w", kFloat, w);
  std::vector<std::string> in = {"x", "w"};
  if (bias) {
    const int64_t c = op == "Gemm" ? y.back() : y[1];
    const Tensor bt = random_tensor(DType::kFloat, {c}, 6);
    m.float_initializer("b", {c}, std::vector<float>(bt.data_as<float>(), bt.data_as<float>() + c));
    in.push_back("b");
  }
  auto& n = m.node(op, in, {"y"}, "node");
  if (attrs) attrs(n);
  m.output("y", kFloat, y);
  return m.bytes();
}

TEST(CudaFp16Mode, ConvolutionsAndProducts) {
  LOOM_SKIP_WITHOUT_GPU();
  const Tensor x4 = random_tensor(DType::kFloat, {2, 32, 19, 23}, 1);
  expect_fp16_mode(product_model("Conv", {2, 32, 19, 23}, {48, 32, 3, 3}, {2, 48, 19, 23}, true,
                                 [](auto& n) { testing::add_ints_attr(n, "pads", {1, 1, 1, 1}); }, true),
                   {{"x", x4}}, "Conv 3x3 with bias, constant W");
  const Tensor w4 = random_tensor(DType::kFloat, {48, 32, 1, 1}, 2, -0.2f, 0.2f);
  expect_fp16_mode(product_model("Conv", {2, 32, 19, 23}, {48, 32, 1, 1}, {2, 48, 19, 23}, false),
                   {{"x", x4}, {"w", w4}}, "Conv 1x1, W an input");
  expect_fp16_mode(product_model("ConvTranspose", {2, 32, 19, 23}, {32, 16, 2, 2}, {2, 16, 38, 46}, true,
                                 [](auto& n) { testing::add_ints_attr(n, "strides", {2, 2}); }),
                   {{"x", x4}}, "ConvTranspose 2x2 stride 2");
  const Tensor x3 = random_tensor(DType::kFloat, {3, 37, 256}, 3);
  expect_fp16_mode(product_model("MatMul", {3, 37, 256}, {256, 129}, {3, 37, 129}, true), {{"x", x3}},
                   "MatMul, constant B");
  const Tensor b3 = random_tensor(DType::kFloat, {3, 256, 61}, 4, -0.2f, 0.2f);
  expect_fp16_mode(product_model("MatMul", {3, 37, 256}, {3, 256, 61}, {3, 37, 61}, false), {{"x", x3}, {"w", b3}},
                   "MatMul, batched B input");
  const Tensor x2 = random_tensor(DType::kFloat, {37, 256}, 7);
  expect_fp16_mode(product_model("Gemm", {37, 256}, {129, 256}, {37, 129}, true,
                                 [](auto& n) { testing::add_int_attr(n, "transB", 1); }, true),
                   {{"x", x2}}, "Gemm transB with C");
}

// Config "precision": "fp16" (transform/float16_conversion.h): the graph
// itself runs in float16 between two Casts, every node on cuda. A ResNet
// block (Conv + Relu fused into FusedConv, a residual Add, pooling, Gemm)
// and a MatMul + LayerNormalization + Softmax chain, against the float32
// reference EP.
std::shared_ptr<Environment> graph_fp16_env() {
  static auto env = cuda_only(OptimizationLevel::kExtended, [](Config& c) { c.precision = Precision::kFloat16; });
  return env;
}

std::vector<float> values_of(const Tensor& t) {
  return std::vector<float>(t.data_as<float>(), t.data_as<float>() + t.element_count());
}

TEST(CudaFp16Mode, GraphConvertedToFloat16) {
  LOOM_SKIP_WITHOUT_GPU();
  testing::ModelBuilder m(17);
  m.input("x", kFloat, {2, 16, 14, 14});
  m.float_initializer("w1", {16, 16, 3, 3}, values_of(random_tensor(DType::kFloat, {16, 16, 3, 3}, 11, -0.1f, 0.1f)));
  m.float_initializer("b1", {16}, values_of(random_tensor(DType::kFloat, {16}, 12)));
  m.float_initializer("w2", {16, 16, 3, 3}, values_of(random_tensor(DType::kFloat, {16, 16, 3, 3}, 13, -0.1f, 0.1f)));
  m.float_initializer("b2", {16}, values_of(random_tensor(DType::kFloat, {16}, 14)));
  m.float_initializer("g", {10, 16}, values_of(random_tensor(DType::kFloat, {10, 16}, 15)));
  m.float_initializer("gb", {10}, values_of(random_tensor(DType::kFloat, {10}, 16)));
  auto& c1 = m.node("Conv", {"x", "w1", "b1"}, {"c1"});
  testing::add_ints_attr(c1, "pads", {1, 1, 1, 1});
  m.node("Relu", {"c1"}, {"r1"});
  auto& c2 = m.node("Conv", {"r1", "w2", "b2"}, {"c2"});
  testing::add_ints_attr(c2, "pads", {1, 1, 1, 1});
  m.node("Add", {"c2", "x"}, {"s"});
  m.node("Relu", {"s"}, {"r2"});
  m.node("GlobalAveragePool", {"r2"}, {"p"});
  m.node("Flatten", {"p"}, {"f"});
  auto& gemm = m.node("Gemm", {"f", "g", "gb"}, {"y"});
  testing::add_int_attr(gemm, "transB", 1);
  m.output("y", kFloat, {2, 10});
  const std::map<std::string, Tensor> in = {{"x", random_tensor(DType::kFloat, {2, 16, 14, 14}, 17)}};
  auto half = make_session(graph_fp16_env(), m.bytes());
  auto reference = make_session(reference_env(), m.bytes());
  ASSERT_TRUE(half && reference);
  int casts = 0;
  for (const auto& n : half->placement().nodes) {
    EXPECT_EQ(n.provider, "cuda") << n.node_name;
    casts += n.op_type == "Cast";
  }
  EXPECT_EQ(casts, 2) << "one Cast in, one out";
  auto h = half->run(in);
  auto r = reference->run(in);
  ASSERT_TRUE(h.has_value()) << h.status().message();
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ((*h)[0].dtype(), DType::kFloat);
  expect_close((*r)[0], (*h)[0], kFp16Mode, "ResNet block in float16");
}

TEST(CudaFp16Mode, GraphConvertedToFloat16Transformer) {
  LOOM_SKIP_WITHOUT_GPU();
  testing::ModelBuilder m(17);
  m.input("x", kFloat, {2, 32, 64});
  m.float_initializer("w", {64, 64}, values_of(random_tensor(DType::kFloat, {64, 64}, 21, -0.2f, 0.2f)));
  m.float_initializer("gamma", {64}, values_of(random_tensor(DType::kFloat, {64}, 22, 0.5f, 1.5f)));
  m.float_initializer("beta", {64}, values_of(random_tensor(DType::kFloat, {64}, 23)));
  m.node("MatMul", {"x", "w"}, {"a"});
  m.node("Add", {"a", "x"}, {"s"});
  auto& ln = m.node("LayerNormalization", {"s", "gamma", "beta"}, {"n"});
  testing::add_int_attr(ln, "axis", -1);
  auto& sm = m.node("Softmax", {"n"}, {"y"});
  testing::add_int_attr(sm, "axis", -1);
  m.output("y", kFloat, {2, 32, 64});
  const std::map<std::string, Tensor> in = {{"x", random_tensor(DType::kFloat, {2, 32, 64}, 24)}};
  auto half = make_session(graph_fp16_env(), m.bytes());
  auto reference = make_session(reference_env(), m.bytes());
  ASSERT_TRUE(half && reference);
  for (const auto& n : half->placement().nodes) EXPECT_EQ(n.provider, "cuda") << n.node_name;
  auto h = half->run(in);
  auto r = reference->run(in);
  ASSERT_TRUE(h.has_value()) << h.status().message();
  ASSERT_TRUE(r.has_value());
  expect_close((*r)[0], (*h)[0], kFp16Mode, "MatMul + LayerNormalization + Softmax in float16");
}

}  // namespace
}  // namespace loom
