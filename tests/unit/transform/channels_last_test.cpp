// The layout phase's channels_last pass: 2-D convolutions and pools move to
// the loom.nhwc ops where their provider prefers them (the reference EP
// with prefer_nhwc), the Transposes between neighbours cancel, and the
// model computes what it computes in NCHW.
#include <gtest/gtest.h>

#include "common/model_builder.h"
#include "transform/passes/channels_last.h"
#include "unit/transform/fusion_checks.h"

namespace loom {
namespace {

using P = ::onnx::TensorProto;
using testing::float_tensor;
using testing::wave;

std::unique_ptr<Session> nhwc_session(const std::string& model, Precision precision = Precision::kFloat32,
                                      std::vector<std::string> disabled = {}) {
  Config c;
  c.providers = {"reference"};
  c.provider_options["reference"]["prefer_nhwc"] = "true";
  c.precision = precision;
  c.disabled_passes = std::move(disabled);
  auto s = Session::create_from_bytes(testing::make_env(c), model);
  EXPECT_TRUE(s.has_value()) << s.status().message();
  return s ? std::move(*s) : nullptr;
}

void weight(testing::ModelBuilder& m, const std::string& name, const Dims& dims, float phase) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  m.float_initializer(name, dims, wave(static_cast<size_t>(n), 0.3f, phase));
}

// A residual block with a stem, pooling on both sides, a depthwise
// convolution and a classifier: every rewritten family in one chain.
std::string block_model() {
  testing::ModelBuilder m(13);
  m.input("x", P::FLOAT, {-1, 3, 15, 15});
  weight(m, "w1", {8, 3, 3, 3}, 0.1f);
  weight(m, "b1", {8}, 0.2f);
  weight(m, "w2", {8, 8, 3, 3}, 0.3f);
  weight(m, "b2", {8}, 0.4f);
  weight(m, "w3", {8, 1, 3, 3}, 0.5f);
  weight(m, "w4", {16, 8, 1, 1}, 0.6f);
  weight(m, "fc", {16, 5}, 0.7f);
  testing::add_ints_attr(m.node("Conv", {"x", "w1", "b1"}, {"c1"}), "pads", {1, 1, 1, 1});
  m.node("Relu", {"c1"}, {"r1"});
  auto& pool = m.node("MaxPool", {"r1"}, {"p1"});
  testing::add_ints_attr(pool, "kernel_shape", {3, 3});
  testing::add_ints_attr(pool, "strides", {2, 2});
  testing::add_ints_attr(pool, "pads", {1, 1, 1, 1});
  testing::add_ints_attr(m.node("Conv", {"p1", "w2", "b2"}, {"c2"}), "pads", {1, 1, 1, 1});
  m.node("Add", {"c2", "p1"}, {"a2"});
  m.node("Relu", {"a2"}, {"r2"});
  auto& dw = m.node("Conv", {"r2", "w3"}, {"c3"});
  testing::add_ints_attr(dw, "pads", {1, 2, 2, 1});
  testing::add_ints_attr(dw, "strides", {2, 1});
  testing::add_ints_attr(dw, "dilations", {1, 2});
  testing::add_int_attr(dw, "group", 8);
  m.node("Sigmoid", {"c3"}, {"s3"});
  auto& avg = m.node("AveragePool", {"s3"}, {"ap"});
  testing::add_ints_attr(avg, "kernel_shape", {2, 3});
  testing::add_ints_attr(avg, "pads", {0, 1, 1, 1});
  testing::add_int_attr(avg, "count_include_pad", 1);
  testing::add_int_attr(avg, "ceil_mode", 1);
  m.node("Conv", {"ap", "w4"}, {"c4"});
  m.node("GlobalAveragePool", {"c4"}, {"g"});
  m.node("Flatten", {"g"}, {"f"});
  m.node("MatMul", {"f", "fc"}, {"y"});
  m.output("y", P::FLOAT, {});
  return m.bytes();
}

std::map<std::string, Tensor> block_input(int64_t n) {
  return {{"x", float_tensor({n, 3, 15, 15}, wave(static_cast<size_t>(n * 3 * 15 * 15), 1.2f, 0.3f))}};
}

TEST(ChannelsLastTest, Listed) { testing::expect_listed_pass("channels_last", OptimizationLevel::kExtended); }

TEST(ChannelsLastTest, ChainRunsChannelsLastWithTransposesOnlyAtItsEdges) {
  auto plain = testing::session(block_model(), OptimizationLevel::kDisabled);
  auto nhwc = nhwc_session(block_model());
  ASSERT_TRUE(plain && nhwc);
  const std::map<std::string, int> want = {{"Transpose", 2},
                                           {"loom.nhwc.FusedConv", 3},
                                           {"loom.nhwc.Conv", 1},
                                           {"loom.nhwc.MaxPool", 1},
                                           {"loom.nhwc.AveragePool", 1},
                                           {"loom.nhwc.GlobalAveragePool", 1},
                                           {"Flatten", 1},
                                           {"MatMul", 1}};
  EXPECT_EQ(testing::op_counts(*nhwc), want);
  testing::expect_same_outputs(*plain, *nhwc, block_input(2), "batch 2", 1e-5);
  testing::expect_same_outputs(*plain, *nhwc, block_input(1), "batch 1", 1e-5);
}

TEST(ChannelsLastTest, Float16ComputeAlsoGoesChannelsLast) {
  auto nchw = testing::session(block_model(), OptimizationLevel::kExtended);
  Config c;
  c.providers = {"reference"};
  c.precision = Precision::kFloat16;
  auto half = Session::create_from_bytes(testing::make_env(c), block_model());
  auto half_nhwc = nhwc_session(block_model(), Precision::kFloat16);
  ASSERT_TRUE(nchw && half && half_nhwc) << half.status().message();
  EXPECT_EQ(testing::op_counts(*half_nhwc)["loom.nhwc.FusedConv"], 3);
  EXPECT_EQ(testing::op_counts(**half)["loom.nhwc.FusedConv"], 0);
  // The same float16 arithmetic in either layout (float accumulation).
  testing::expect_same_outputs(**half, *half_nhwc, block_input(2), "float16", 2e-3);
}

TEST(ChannelsLastTest, OnlyWhereTheProviderPrefersIt) {
  // The reference EP without prefer_nhwc, and with the pass disabled.
  auto plain = testing::session(block_model(), OptimizationLevel::kExtended);
  auto disabled = nhwc_session(block_model(), Precision::kFloat32, {"channels_last"});
  ASSERT_TRUE(plain && disabled);
  for (Session* s : {plain.get(), disabled.get()}) {
    auto counts = testing::op_counts(*s);
    EXPECT_EQ(counts["com.microsoft.FusedConv"], 3);
    EXPECT_EQ(counts["Transpose"], 0);
  }
}

TEST(ChannelsLastTest, NodesItCannotExpressStay) {
  // MaxPool with Indices, a Conv whose weight is an input, and a 3-D pool.
  testing::ModelBuilder m(13);
  m.input("x", P::FLOAT, {1, 2, 6, 6});
  m.input("w", P::FLOAT, {2, 2, 1, 1});
  m.input("v", P::FLOAT, {1, 2, 4, 4, 4});
  auto& pool = m.node("MaxPool", {"x"}, {"p", "idx"});
  testing::add_ints_attr(pool, "kernel_shape", {2, 2});
  m.node("Conv", {"x", "w"}, {"c"});
  auto& pool3 = m.node("AveragePool", {"v"}, {"q"});
  testing::add_ints_attr(pool3, "kernel_shape", {2, 2, 2});
  for (const char* o : {"p", "idx", "c", "q"}) m.output(o, o == std::string("idx") ? P::INT64 : P::FLOAT, {});
  auto s = nhwc_session(m.bytes());
  ASSERT_TRUE(s);
  const std::map<std::string, int> want = {{"MaxPool", 1}, {"Conv", 1}, {"AveragePool", 1}};
  EXPECT_EQ(testing::op_counts(*s), want);
}

TEST(ChannelsLastTest, OhwiWeight) {
  // W[m][c][y][x] = 1000m + 100c + 10y + x lands at [m][y][x][c].
  std::vector<float> v;
  for (int m = 0; m < 2; ++m)
    for (int c = 0; c < 3; ++c)
      for (int y = 0; y < 2; ++y)
        for (int x = 0; x < 2; ++x) v.push_back(static_cast<float>(1000 * m + 100 * c + 10 * y + x));
  auto w = transform::ohwi_weight(float_tensor({2, 3, 2, 2}, v));
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->dims(), (Dims{2, 2, 2, 3}));
  const float* p = w->data_as<float>();
  for (int m = 0; m < 2; ++m)
    for (int y = 0; y < 2; ++y)
      for (int x = 0; x < 2; ++x)
        for (int c = 0; c < 3; ++c)
          EXPECT_EQ(p[((m * 2 + y) * 2 + x) * 3 + c], static_cast<float>(1000 * m + 100 * c + 10 * y + x));
  EXPECT_FALSE(transform::ohwi_weight(float_tensor({2, 3, 4}, std::vector<float>(24))).has_value());
}

}  // namespace
}  // namespace loom
