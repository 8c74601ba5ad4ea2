// Models quantized by ONNX Runtime's quantize_dynamic on cpu_onednn vs the
// reference EP: DynamicQuantizeLinear (bit-exact, edge cases included), and
// the MatMulInteger chains dynamic_quant_matmul_fusion turns into
// MatMulIntegerToFloat with run-time activation scale and zero point, in an
// MLP and a BERT-style encoder layer (every node on cpu_onednn), int8 and
// uint8 weights, and with the scale and zero point as graph inputs.
//
// Tolerances: one layer differs from the reference only in how oneDNN forms
// float(acc) * scale + bias (1 ulp or so). A later layer quantizes an
// activation computed in float by both EPs; where the two differ by an ulp
// the range, and so the scale, may differ by an ulp too, and a value at a
// .5 tie of x / scale may round to the neighbouring step: each such element
// moves the output by at most scale * |w|, hence the looser tolerance.
#include <cmath>
#include <cstring>
#include <limits>

#include "common/dynamic_quant_model.h"
#include "ep_compare.h"

namespace loom::ep_testing {
namespace {

using testing::DynamicLinear;

// Equal types, dims and bytes.
void expect_same_bytes(const Tensor& want, const Tensor& got, const std::string& what) {
  ASSERT_EQ(want.dtype(), got.dtype()) << what;
  ASSERT_EQ(want.dims(), got.dims()) << what;
  const auto* a = static_cast<const uint8_t*>(want.data());
  const auto* b = static_cast<const uint8_t*>(got.data());
  const size_t bytes = static_cast<size_t>(want.element_count()) * dtype_size(want.dtype());
  size_t first = bytes;
  for (size_t i = 0; i < bytes && first == bytes; ++i)
    if (a[i] != b[i]) first = i;
  EXPECT_EQ(first, bytes) << what << ": first differing byte " << first;
}

std::string dql_model(const std::vector<int64_t>& dims) {
  testing::ModelBuilder m(13);
  m.input("x", kFloat, dims);
  m.node("DynamicQuantizeLinear", {"x"}, {"y", "y_scale", "y_zero_point"});
  m.output("y", ::onnx::TensorProto::UINT8, dims);
  m.output("y_scale", kFloat, {});
  m.output("y_zero_point", ::onnx::TensorProto::UINT8, {});
  return m.bytes();
}

void expect_dql_matches(const std::vector<float>& x, const std::string& what) {
  const std::vector<int64_t> dims = {static_cast<int64_t>(x.size())};
  const std::string model = dql_model(dims);
  auto onednn = make_session(onednn_env(), model);
  auto reference = make_session(reference_env(), model);
  ASSERT_TRUE(onednn && reference) << what;
  for (const auto& n : onednn->placement().nodes) EXPECT_EQ(n.provider, "cpu_onednn") << what;
  const std::map<std::string, Tensor> in = {{"x", testing::float_tensor(Dims(dims), x)}};
  auto got = onednn->run(in);
  auto want = reference->run(in);
  ASSERT_TRUE(got.has_value()) << what << ": " << got.status().message();
  ASSERT_TRUE(want.has_value()) << what << ": " << want.status().message();
  for (size_t i = 0; i < 3; ++i) expect_same_bytes((*want)[i], (*got)[i], what + " output " + std::to_string(i));
}

TEST(OnednnDynamicQuant, DynamicQuantizeLinearIsBitExact) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  expect_dql_matches(random_values(1000, 1, -3.f, 5.f), "mixed signs");
  expect_dql_matches(random_values(77, 2, 0.5f, 2.f), "all positive (min clamps to 0), odd length");
  expect_dql_matches(random_values(50, 3, -2.f, -0.1f), "all negative");
  expect_dql_matches(random_values(200001, 4, -1.f, 1.f), "large, split across threads");
  expect_dql_matches(std::vector<float>(33, 0.f), "all zero: scale 1");
  expect_dql_matches({0.f}, "one zero");
  expect_dql_matches({2.5f, -0.f, 1e-30f, -1e-30f, 1e-45f}, "tiny and signed zeros");
  // 255 * k / 255 ties: the values x / scale lands on .5 exactly.
  std::vector<float> ties;
  for (int i = -300; i <= 300; ++i) ties.push_back(static_cast<float>(i) * 0.5f);
  expect_dql_matches(ties, "half steps");
  std::vector<float> specials = random_values(40, 5);
  specials[3] = nan;
  expect_dql_matches(specials, "a NaN");
  specials[7] = inf;
  expect_dql_matches(specials, "NaN and +inf");
  specials[9] = -inf;
  expect_dql_matches(specials, "NaN, +inf and -inf");
  expect_dql_matches({-inf, 1.f, 2.f}, "-inf only");
  expect_dql_matches({nan, nan}, "all NaN");
}

// Two quantize_dynamic layers: x [4, 64] -> 128 -> Relu -> 32.
std::string mlp(bool per_channel, bool signed_weights = true) {
  testing::ModelBuilder m(13);
  m.input("x", kFloat, {4, 64});
  testing::dynamic_quantize(m, "x");
  DynamicLinear l1;
  l1.x = "x";
  l1.output = "h";
  l1.k = 64;
  l1.n = 128;
  l1.per_channel = per_channel;
  l1.signed_weights = signed_weights;
  testing::dynamic_linear(m, l1);
  m.node("Relu", {"h"}, {"h_relu"});
  testing::dynamic_quantize(m, "h_relu");
  DynamicLinear l2 = l1;
  l2.x = "h_relu";
  l2.output = "y";
  l2.k = 128;
  l2.n = 32;
  l2.seed = 2;
  l2.bias = false;
  testing::dynamic_linear(m, l2);
  m.output("y", kFloat, {4, 32});
  return m.bytes();
}

// The op counts of a session's nodes by provider ("provider:op").
std::map<std::string, int> placed(const Session& s) {
  std::map<std::string, int> out;
  for (const auto& n : s.placement().nodes) ++out[n.provider + ":" + n.op_type];
  return out;
}

TEST(OnednnDynamicQuant, MlpRunsOnOnednn) {
  for (bool is_signed : {true, false})
    for (bool per_channel : {false, true}) {
      const std::string what =
          std::string(is_signed ? "int8" : "uint8") + (per_channel ? " per column" : " per tensor");
      const std::string model = mlp(per_channel, is_signed);
      auto s = make_session(onednn_env(), model);
      ASSERT_TRUE(s) << what;
      EXPECT_EQ(placed(*s), (std::map<std::string, int>{{"cpu_onednn:DynamicQuantizeLinear", 2},
                                                        {"cpu_onednn:MatMulIntegerToFloat", 2},
                                                        {"cpu_onednn:Relu", 1}}))
          << what;
      expect_matches_reference(model, {{"x", random_tensor({4, 64}, 11, -2.f, 2.f)}}, {1e-3, 2e-3}, what);
    }
}

// One layer alone: DynamicQuantizeLinear is bit-exact, so only the final
// scale multiply and bias add may round differently.
// uint8 weights (nonzero zero points) take the shifted int8 matmul, which
// reproduces the reference's arithmetic exactly.
TEST(OnednnDynamicQuant, OneLayerIsTight) {
  for (bool is_signed : {true, false})
    for (bool per_channel : {false, true})
      for (bool bias : {false, true}) {
        testing::ModelBuilder m(13);
        m.input("x", kFloat, {2, 5, 48});
        testing::dynamic_quantize(m, "x");
        DynamicLinear l;
        l.x = "x";
        l.output = "y";
        l.k = 48;
        l.n = 40;
        l.per_channel = per_channel;
        l.bias = bias;
        l.signed_weights = is_signed;
        testing::dynamic_linear(m, l);
        m.output("y", kFloat, {2, 5, 40});
        const std::string what = std::string(is_signed ? "int8" : "uint8") +
                                 (per_channel ? " per column" : " per tensor") + (bias ? ", bias" : "");
        expect_matches_reference(m.bytes(), {{"x", random_tensor({2, 5, 48}, 3, -4.f, 1.f)}},
                                 is_signed ? Tolerance{1e-5, 1e-6} : Tolerance{0, 0}, what);
      }
}

// A BERT-style encoder layer as quantize_dynamic writes it (one head, so no
// head reshapes): Q, K and V projections sharing one DynamicQuantizeLinear,
// float attention, the output projection, residual + LayerNormalization, an
// erf Gelu FFN (hidden -> 2 hidden -> hidden), residual + LayerNormalization.
// x [batch, seq, hidden], every weight int8 [in, out].
std::string encoder_layer(int64_t batch, int64_t seq, int64_t hidden, bool per_channel) {
  testing::ModelBuilder m(17);  // LayerNormalization
  m.input("x", kFloat, {batch, seq, hidden});
  uint32_t seed = 20;
  auto linear = [&](const std::string& x, const std::string& y, int64_t k, int64_t n) {
    DynamicLinear l;
    l.x = x;
    l.output = y;
    l.k = k;
    l.n = n;
    l.per_channel = per_channel;
    l.seed = seed++;
    testing::dynamic_linear(m, l);
  };
  auto layer_norm = [&](const std::string& x, const std::string& y) {
    m.float_initializer(y + "_gamma", {hidden}, random_values(static_cast<size_t>(hidden), seed++, 0.8f, 1.2f));
    m.float_initializer(y + "_beta", {hidden}, random_values(static_cast<size_t>(hidden), seed++, -0.1f, 0.1f));
    auto& ln = m.node("LayerNormalization", {x, y + "_gamma", y + "_beta"}, {y});
    testing::add_int_attr(ln, "axis", -1);
  };
  testing::dynamic_quantize(m, "x");
  linear("x", "q", hidden, hidden);
  linear("x", "k", hidden, hidden);
  linear("x", "v", hidden, hidden);
  auto& kt = m.node("Transpose", {"k"}, {"k_t"});
  add_ints_attr(kt, "perm", {0, 2, 1});
  m.node("MatMul", {"q", "k_t"}, {"scores"});
  m.float_initializer("inv_sqrt_d", {}, {1.f / std::sqrt(static_cast<float>(hidden))});
  m.node("Mul", {"scores", "inv_sqrt_d"}, {"scaled"});
  auto& sm = m.node("Softmax", {"scaled"}, {"probs"});
  testing::add_int_attr(sm, "axis", -1);
  m.node("MatMul", {"probs", "v"}, {"context"});
  testing::dynamic_quantize(m, "context");
  linear("context", "attn_out", hidden, hidden);
  m.node("Add", {"attn_out", "x"}, {"res1"});
  layer_norm("res1", "ln1");
  testing::dynamic_quantize(m, "ln1");
  linear("ln1", "ff1", hidden, 2 * hidden);
  // Gelu(x) = x * 0.5 * (1 + erf(x / sqrt(2))).
  m.float_initializer("sqrt2", {}, {std::sqrt(2.f)}).float_initializer("one", {}, {1.f});
  m.float_initializer("half", {}, {0.5f});
  m.node("Div", {"ff1", "sqrt2"}, {"g_div"});
  m.node("Erf", {"g_div"}, {"g_erf"});
  m.node("Add", {"g_erf", "one"}, {"g_add"});
  m.node("Mul", {"ff1", "g_add"}, {"g_mul"});
  m.node("Mul", {"g_mul", "half"}, {"gelu"});
  testing::dynamic_quantize(m, "gelu");
  linear("gelu", "ff2", 2 * hidden, hidden);
  m.node("Add", {"ff2", "ln1"}, {"res2"});
  layer_norm("res2", "y");
  m.output("y", kFloat, {batch, seq, hidden});
  return m.bytes();
}

TEST(OnednnDynamicQuant, EncoderLayerRunsOnOnednn) {
  for (bool per_channel : {false, true}) {
    const std::string what = per_channel ? "per column" : "per tensor";
    const std::string model = encoder_layer(2, 16, 64, per_channel);
    auto s = make_session(onednn_env(), model);
    ASSERT_TRUE(s) << what;
    const auto counts = placed(*s);
    EXPECT_EQ(counts.count("cpu_onednn:MatMulInteger"), 0u) << what;
    EXPECT_EQ(counts.at("cpu_onednn:MatMulIntegerToFloat"), 6) << what;
    EXPECT_EQ(counts.at("cpu_onednn:DynamicQuantizeLinear"), 4) << what;
    expect_matches_reference(model, {{"x", random_tensor({2, 16, 64}, 5, -1.f, 1.f)}}, {5e-3, 5e-3}, what);
  }
}


// MatMulIntegerToFloat whose a_scale and a_zero_point are graph inputs
// (partition inputs of cpu_onednn, not a DynamicQuantizeLinear of its own),
// int8 and uint8 weights.
TEST(OnednnDynamicQuant, RunTimeScaleFromGraphInputs) {
  for (bool signed_b : {true, false}) {
    testing::ModelBuilder m(13);
    m.import_domain("com.microsoft", 1);
    m.input("a", ::onnx::TensorProto::UINT8, {3, 32});
    m.input("a_scale", kFloat, {});
    m.input("a_zero", ::onnx::TensorProto::UINT8, {});
    const auto bt = signed_b ? ::onnx::TensorProto::INT8 : ::onnx::TensorProto::UINT8;
    std::vector<int32_t> b;
    for (float v : random_values(32 * 12, 9, signed_b ? -127.f : 0.f, signed_b ? 127.f : 255.f))
      b.push_back(static_cast<int32_t>(v));
    m.int_initializer("b", bt, {32, 12}, b);
    m.float_initializer("b_scale", {12}, random_values(12, 10, 0.002f, 0.008f));
    m.int_initializer("b_zero", bt, {12}, std::vector<int32_t>(12, signed_b ? 0 : 131));
    m.float_initializer("bias", {12}, random_values(12, 11));
    m.node("MatMulIntegerToFloat", {"a", "b", "a_scale", "b_scale", "a_zero", "b_zero", "bias"}, {"y"}, "mmitf",
           "com.microsoft");
    m.output("y", kFloat, {3, 12});
    std::vector<uint8_t> a;
    for (float v : random_values(3 * 32, 12, 0.f, 255.f)) a.push_back(static_cast<uint8_t>(v));
    expect_matches_reference(m.bytes(),
                             {{"a", Tensor::from_vector(DType::kUint8, Dims{3, 32}, a)},
                              {"a_scale", testing::float_tensor(Dims{}, {0.037f})},
                              {"a_zero", Tensor::from_vector(DType::kUint8, Dims{}, std::vector<uint8_t>{117})}},
                             signed_b ? Tolerance{1e-5, 1e-6} : Tolerance{0, 0}, signed_b ? "int8 B" : "uint8 B");
  }
}

// A DynamicQuantizeLinear whose input is known to be empty stays with the
// reference EP (oneDNN has no zero-sized memory), with the reason.
TEST(OnednnDynamicQuant, EmptyInputIsLeftToTheReference) {
  auto env = environment({"cpu_onednn", "reference"}, FallbackPolicy::kAllow);
  auto s = make_session(env, dql_model({2, 0}));
  ASSERT_TRUE(s);
  ASSERT_EQ(s->placement().nodes.size(), 1u);
  EXPECT_EQ(s->placement().nodes[0].provider, "reference");
  EXPECT_NE(s->placement().nodes[0].reason.find("empty"), std::string::npos) << s->placement().nodes[0].reason;
}

}  // namespace
}  // namespace loom::ep_testing
