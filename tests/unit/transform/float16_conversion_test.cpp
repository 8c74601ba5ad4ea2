// Float16 conversion (config "precision": "fp16", transform/float16_conversion.h):
// which nodes go to float16, where Casts appear, what keeps float32, and that
// the model still computes the same function within float16's rounding.
#include <gtest/gtest.h>

#include <algorithm>

#include "common/model_builder.h"
#include "loom/sdk/dtype.h"
#include "transform/passes/float16_conversion.h"
#include "unit/transform/fusion_checks.h"

namespace loom {
namespace {

using P = ::onnx::TensorProto;

std::unique_ptr<Session> session_at(const std::string& model, Precision precision,
                                    OptimizationLevel level = OptimizationLevel::kBasic) {
  Config c;
  c.providers = {"reference"};
  c.optimization_level = level;
  c.precision = precision;
  auto s = Session::create_from_bytes(testing::make_env(c), model);
  EXPECT_TRUE(s.has_value()) << s.status().message();
  return s ? std::move(*s) : nullptr;
}

const PlacementReport::NodePlacement* node_of(const Session& s, const std::string& op) {
  for (const auto& n : s.placement().nodes)
    if (n.op_type == op) return &n;
  return nullptr;
}

bool reads_half(const PlacementReport::NodePlacement& n, size_t input) {
  return input < n.inputs.size() && n.inputs[input].find("_fp16") != std::string::npos;
}

// x [2,3,8,8] -> Conv(W, B) -> Relu -> GlobalAveragePool -> Flatten -> Gemm -> y [2,5]
std::string conv_classifier() {
  testing::ModelBuilder m(17);
  m.input("x", P::FLOAT, {2, 3, 8, 8});
  m.float_initializer("W", {4, 3, 3, 3}, testing::wave(4 * 3 * 3 * 3, 0.4f));
  m.float_initializer("B", {4}, {0.1f, -0.2f, 0.3f, 1e6f});  // 1e6 saturates at 65504 in float16
  m.float_initializer("G", {5, 4}, testing::wave(20, 0.5f, 1.f));
  m.float_initializer("C", {5}, {0.f, 1.f, -1.f, 2.f, 0.5f});
  auto& conv = m.node("Conv", {"x", "W", "B"}, {"c"});
  testing::add_ints_attr(conv, "pads", {1, 1, 1, 1});
  m.node("Relu", {"c"}, {"r"});
  m.node("GlobalAveragePool", {"r"}, {"p"});
  m.node("Flatten", {"p"}, {"f"});
  auto& gemm = m.node("Gemm", {"f", "G", "C"}, {"y"});
  testing::add_int_attr(gemm, "transB", 1);
  m.output("y", P::FLOAT, {2, 5});
  return m.bytes();
}

std::map<std::string, Tensor> image() {
  return {{"x", testing::float_tensor({2, 3, 8, 8}, testing::wave(2 * 3 * 8 * 8, 1.f, 0.3f))}};
}

TEST(Float16ConversionTest, ComputeRunsInHalfBetweenTwoCasts) {
  auto plain = session_at(conv_classifier(), Precision::kFloat32);
  auto half = session_at(conv_classifier(), Precision::kFloat16);
  ASSERT_TRUE(plain && half);
  auto counts = testing::op_counts(*half);
  EXPECT_EQ(counts["Cast"], 2) << "one Cast in (x), one out (y)";
  EXPECT_EQ(testing::op_counts(*plain)["Cast"], 0);
  for (const char* op : {"Conv", "Relu", "GlobalAveragePool", "Flatten", "Gemm"}) {
    const auto* n = node_of(*half, op);
    ASSERT_NE(n, nullptr) << op;
    EXPECT_TRUE(reads_half(*n, 0)) << op << " reads " << n->inputs[0];
  }
  EXPECT_TRUE(reads_half(*node_of(*half, "Conv"), 1)) << "the weight is stored as float16";
  auto got = half->run(image());
  auto want = plain->run(image());
  ASSERT_TRUE(got && want) << (got ? want.status().message() : got.status().message());
  ASSERT_EQ((*got)[0].dtype(), DType::kFloat) << "outputs keep float32";
  ASSERT_EQ((*got)[0].dims(), (Dims{2, 5}));
  const float* g = (*got)[0].data_as<float>();
  const float* w = (*want)[0].data_as<float>();
  // Channel 3's bias saturated: 1e6 became 65504, so compare channel-free
  // outputs through the other channels' contribution only loosely.
  double num = 0, den = 0;
  for (int i = 0; i < 10; ++i) num += (g[i] - w[i]) * (g[i] - w[i]), den += w[i] * w[i];
  EXPECT_GT(num, 0.0) << "float16 rounding (and the saturated bias) must show";
  EXPECT_TRUE(std::isfinite(g[0]) && std::isfinite(g[9])) << "saturation, not infinity";
}

TEST(Float16ConversionTest, SameFunctionWithinHalfRounding) {
  // Without the saturating bias: relative L2 under float16's 1e-3 scale.
  testing::ModelBuilder m(17);
  m.input("x", P::FLOAT, {2, 3, 8, 8});
  m.float_initializer("W", {4, 3, 3, 3}, testing::wave(4 * 3 * 3 * 3, 0.4f));
  m.float_initializer("B", {4}, {0.1f, -0.2f, 0.3f, 0.05f});
  m.node("Conv", {"x", "W", "B"}, {"c"});
  m.node("Sigmoid", {"c"}, {"s"});
  m.node("Mul", {"c", "s"}, {"y"});
  m.output("y", P::FLOAT, {2, 4, 6, 6});
  auto plain = session_at(m.bytes(), Precision::kFloat32);
  auto half = session_at(m.bytes(), Precision::kFloat16);
  ASSERT_TRUE(plain && half);
  EXPECT_EQ(testing::op_counts(*half)["Cast"], 2);
  auto got = half->run(image());
  auto want = plain->run(image());
  ASSERT_TRUE(got && want);
  double num = 0, den = 0;
  for (int64_t i = 0; i < (*want)[0].element_count(); ++i) {
    const double d = (*got)[0].data_as<float>()[i] - (*want)[0].data_as<float>()[i];
    num += d * d;
    den += static_cast<double>((*want)[0].data_as<float>()[i]) * (*want)[0].data_as<float>()[i];
  }
  EXPECT_LT(std::sqrt(num / den), 3e-3);
  EXPECT_GT(num, 0.0) << "the float16 path really ran";
}

TEST(Float16ConversionTest, FloatReadersAndOutputsKeepTheirNames) {
  // c is a graph output and also read by ReduceSum (not converted): one Cast
  // back to float32 named c serves both; the Relu reads the float16 value.
  testing::ModelBuilder m(17);
  m.input("x", P::FLOAT, {4, 32});
  m.input("y", P::FLOAT, {4, 32});
  m.node("Add", {"x", "y"}, {"c"});
  m.node("Relu", {"c"}, {"r"});
  auto& sum = m.node("ReduceSum", {"c"}, {"s"});
  testing::add_int_attr(sum, "keepdims", 0);
  m.output("c", P::FLOAT, {4, 32});
  m.output("r", P::FLOAT, {4, 32});
  m.output("s", P::FLOAT, {});
  auto half = session_at(m.bytes(), Precision::kFloat16);
  ASSERT_TRUE(half);
  auto counts = testing::op_counts(*half);
  EXPECT_EQ(counts["Cast"], 4) << "x and y in; c and r out";
  EXPECT_TRUE(reads_half(*node_of(*half, "Relu"), 0));
  EXPECT_EQ(node_of(*half, "ReduceSum")->inputs[0], "c") << "the float32 reader reads the Cast back";
  std::vector<float> xs(128), ys(128);
  for (int i = 0; i < 128; ++i) xs[i] = 0.25f * (i % 9) - 1.f, ys[i] = 0.5f;
  auto out = half->run({{"x", testing::float_tensor({4, 32}, xs)}, {"y", testing::float_tensor({4, 32}, ys)}});
  ASSERT_TRUE(out) << out.status().message();
  ASSERT_EQ(out->size(), 3u);
  for (const Tensor& t : *out) EXPECT_EQ(t.dtype(), DType::kFloat);
  EXPECT_FLOAT_EQ((*out)[0].data_as<float>()[0], xs[0] + ys[0]);  // exact in float16
}

TEST(Float16ConversionTest, ShapeArithmeticOnFloatsStaysFloat32) {
  // Every T value small and fully known: a scale computed in float stays float32.
  testing::ModelBuilder m(17);
  m.input("s", P::FLOAT, {4});
  m.float_initializer("k", {4}, {1.f, 1.f, 0.3333333f, 2048.7f});
  m.node("Mul", {"s", "k"}, {"y"});
  m.output("y", P::FLOAT, {4});
  auto half = session_at(m.bytes(), Precision::kFloat16);
  ASSERT_TRUE(half);
  EXPECT_EQ(testing::op_counts(*half)["Cast"], 0);
  auto out = half->run({{"s", testing::float_tensor({4}, {3.f, 3.f, 3.f, 1.f})}});
  ASSERT_TRUE(out);
  EXPECT_FLOAT_EQ((*out)[0].data_as<float>()[2], 3.f * 0.3333333f) << "float32 arithmetic";
  EXPECT_FLOAT_EQ((*out)[0].data_as<float>()[3], 2048.7f);
}

TEST(Float16ConversionTest, FusedOpsConvertToo) {
  // At the extended level Conv + Relu fuse into com.microsoft FusedConv; it
  // converts like Conv (the reference EP runs it in float16 through float).
  auto half = session_at(conv_classifier(), Precision::kFloat16, OptimizationLevel::kExtended);
  auto plain = session_at(conv_classifier(), Precision::kFloat32, OptimizationLevel::kExtended);
  ASSERT_TRUE(half && plain);
  const auto* fused = node_of(*half, "FusedConv");
  ASSERT_NE(fused, nullptr);
  EXPECT_TRUE(reads_half(*fused, 0));
  auto got = half->run(image());
  ASSERT_TRUE(got) << got.status().message();
  EXPECT_EQ((*got)[0].dtype(), DType::kFloat);
}

ir::ValueType float_type(DType dtype, Dims dims) {
  ir::ValueType t;
  t.dtype = dtype;
  t.has_shape = true;
  for (int64_t d : dims) t.dims.push_back(DimInfo{d, ""});
  return t;
}

ir::Node make(const std::string& op, std::vector<std::string> in, std::vector<std::string> out) {
  ir::Node n;
  n.name = op;
  n.op_type = op;
  n.opset = 17;
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  return n;
}

const ir::Node* find(const ir::Graph& g, const std::string& op) {
  for (const auto& n : g.nodes())
    if (n->op_type == op) return n.get();
  return nullptr;
}

TEST(Float16ConversionTest, DeclinedNodesKeepFloat32BetweenCasts) {
  // x -> MatMul(W) -> Relu -> Sigmoid -> y, where the EP declines a float16 Relu.
  ir::Graph g;
  g.opsets[""] = 17;
  g.inputs = {"x"};
  g.outputs = {"y"};
  g.initializers["W"] = testing::float_tensor({16, 16}, testing::wave(256, 1e5f));  // beyond float16's range
  for (const char* v : {"x", "a", "r", "y"}) g.value_types[v] = float_type(DType::kFloat, {8, 16});
  g.value_types["W"] = float_type(DType::kFloat, {16, 16});
  g.add_node(make("MatMul", {"x", "W"}, {"a"}));
  g.add_node(make("Relu", {"a"}, {"r"}));
  g.add_node(make("Sigmoid", {"r"}, {"y"}));
  std::vector<std::string> asked;
  auto report = transform::convert_to_float16(
      g, [&](const ir::Graph&, const std::vector<ir::NodeId>&, const ir::Node& half,
             const std::map<std::string, ir::ValueType>& staged, const std::map<std::string, Tensor>& constants) {
        asked.push_back(half.op_type);
        for (const std::string& in : half.inputs) {
          EXPECT_EQ(staged.at(in).dtype, DType::kFloat16) << half.op_type << " " << in;
          if (in.rfind("W", 0) == 0) EXPECT_EQ(constants.count(in), 1u) << "the weight is offered as a constant";
        }
        return half.op_type != "Relu";
      });
  ASSERT_TRUE(report) << report.status().message();
  EXPECT_EQ(asked, (std::vector<std::string>{"MatMul", "Relu", "Sigmoid"}));
  EXPECT_EQ(report->nodes_converted, 2);
  EXPECT_EQ(report->nodes_kept, 1);
  EXPECT_EQ(report->initializers_converted, 1);
  EXPECT_EQ(report->casts_added, 4) << "x in, a back, r in, y back";
  const ir::Node* relu = find(g, "Relu");
  ASSERT_NE(relu, nullptr);
  EXPECT_EQ(relu->inputs[0], "a") << "the float32 node reads the Cast back";
  EXPECT_EQ(g.type_of("a")->dtype, DType::kFloat);
  const ir::Node* matmul = find(g, "MatMul");
  EXPECT_EQ(g.type_of(matmul->outputs[0])->dtype, DType::kFloat16);
  EXPECT_EQ(g.type_of(matmul->inputs[1])->dtype, DType::kFloat16);
  EXPECT_EQ(g.initializers.count("W"), 0u) << "the float32 weight nobody reads is gone";
  const Tensor& w = g.initializers.at(matmul->inputs[1]);
  for (int64_t i = 0; i < w.element_count(); ++i)
    EXPECT_LE(std::fabs(float(sdk::Float16::to_float(w.data_as<uint16_t>()[i]))), 65504.f) << "saturated at " << i;
  EXPECT_EQ(g.outputs, (std::vector<std::string>{"y"}));
  EXPECT_EQ(g.type_of("y")->dtype, DType::kFloat);
  EXPECT_TRUE(g.topological_order().has_value());
}

TEST(Float16ConversionTest, ConfigKey) {
  auto c = Config::from_json_string(R"({"precision": "fp16"})");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->precision, Precision::kFloat16);
  EXPECT_NE(c->to_json().find("\"precision\": \"fp16\""), std::string::npos);
  auto bad = Config::from_json_string(R"({"precision": "int8"})");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.status().message().find("precision"), std::string::npos) << bad.status().message();
  EXPECT_EQ(Config().precision, Precision::kFloat32);
}

}  // namespace
}  // namespace loom

namespace loom {
namespace {

// A float16 model as converters write it: float16 weights, a Cast in and a
// Cast out. x [1,3,8,8] -> Cast -> Conv -> Relu -> GlobalAveragePool -> Cast -> y.
std::string half_conv_model() {
  testing::ModelBuilder m(17);
  m.input("x", P::FLOAT, {1, 3, 8, 8});
  auto add_half = [&](const std::string& name, const Dims& dims, const std::vector<float>& values) {
    std::vector<uint16_t> bits;
    for (float v : values) bits.push_back(sdk::Float16(v).bits);
    auto* t = m.proto().mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(P::FLOAT16);
    for (int64_t d : dims) t->add_dims(d);
    t->set_raw_data(std::string(reinterpret_cast<const char*>(bits.data()), bits.size() * 2));
  };
  add_half("W", {4, 3, 3, 3}, testing::wave(108, 0.4f));
  add_half("B", {4}, {0.1f, -0.2f, 0.3f, 0.05f});
  testing::add_int_attr(m.node("Cast", {"x"}, {"xh"}), "to", P::FLOAT16);
  testing::add_ints_attr(m.node("Conv", {"xh", "W", "B"}, {"c"}), "pads", {1, 1, 1, 1});
  m.node("Relu", {"c"}, {"r"});
  m.node("GlobalAveragePool", {"r"}, {"p"});
  testing::add_int_attr(m.node("Cast", {"p"}, {"y"}), "to", P::FLOAT);
  m.output("y", P::FLOAT, {1, 4, 1, 1});
  return m.bytes();
}

std::unique_ptr<Session> session_with(const std::string& model, std::vector<std::string> providers) {
  Config c;
  c.providers = std::move(providers);
  auto s = Session::create_from_bytes(testing::make_env(c), model);
  EXPECT_TRUE(s.has_value()) << s.status().message();
  return s ? std::move(*s) : nullptr;
}

TEST(Float32ComputeTest, Float16ModelRunsOnTheFastCpuProviderInFloat32) {
  if (!testing::has_provider("cpu_onednn")) GTEST_SKIP() << "built without cpu_onednn (LOOM_WITH_ONEDNN=OFF)";
  auto fast = session_with(half_conv_model(), {"cpu_onednn", "reference"});
  auto oracle = session_with(half_conv_model(), {"reference"});
  ASSERT_TRUE(fast && oracle);
  for (const auto& n : fast->placement().nodes)
    if (n.op_type != "Cast") EXPECT_EQ(n.provider, "cpu_onednn") << n.op_type << ": " << n.reason;
  EXPECT_EQ(testing::op_counts(*oracle)["Cast"], 2) << "the oracle keeps the model's own float16 compute";
  const std::map<std::string, Tensor> in = {{"x", testing::float_tensor({1, 3, 8, 8}, testing::wave(192, 1.f, 0.2f))}};
  auto got = fast->run(in);
  auto want = oracle->run(in);
  ASSERT_TRUE(got && want) << (got ? want.status().message() : got.status().message());
  ASSERT_EQ((*got)[0].dtype(), DType::kFloat);
  for (int i = 0; i < 4; ++i)
    EXPECT_NEAR((*got)[0].data_as<float>()[i], (*want)[0].data_as<float>()[i], 2e-3 + 2e-3 * std::fabs((*want)[0].data_as<float>()[i]));
}

TEST(Float32ComputeTest, WidensConstantsExactlyBetweenCasts) {
  ir::Graph g;
  g.opsets[""] = 17;
  g.inputs = {"x"};
  g.outputs = {"y"};
  std::vector<uint16_t> bits;
  for (int i = 0; i < 256; ++i) bits.push_back(sdk::Float16(0.001f * static_cast<float>(i - 128)).bits);
  g.initializers["W"] = Tensor::from_vector(DType::kFloat16, {16, 16}, bits);
  for (const char* v : {"x", "a", "y"}) g.value_types[v] = float_type(DType::kFloat16, {8, 16});
  g.value_types["W"] = float_type(DType::kFloat16, {16, 16});
  g.add_node(make("MatMul", {"x", "W"}, {"a"}));
  g.add_node(make("Relu", {"a"}, {"y"}));
  auto report = transform::compute_float16_in_float32(g, nullptr);
  ASSERT_TRUE(report) << report.status().message();
  EXPECT_EQ(report->nodes_converted, 2);
  EXPECT_EQ(report->casts_added, 2) << "x widened in, y narrowed out";
  const ir::Node* matmul = find(g, "MatMul");
  ASSERT_NE(matmul, nullptr);
  const Tensor& w = g.initializers.at(matmul->inputs[1]);
  ASSERT_EQ(w.dtype(), DType::kFloat);
  for (int i = 0; i < 256; ++i) EXPECT_EQ(w.data_as<float>()[i], sdk::Float16::to_float(bits[i])) << i;
  EXPECT_EQ(g.type_of("y")->dtype, DType::kFloat16) << "outputs keep the model's type";
  EXPECT_EQ(g.type_of(matmul->outputs[0])->dtype, DType::kFloat);
}

}  // namespace
}  // namespace loom
