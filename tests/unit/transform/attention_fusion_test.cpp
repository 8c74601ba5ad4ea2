// attention_fusion and fast_gelu_fusion: the patterns torch.onnx.export
// writes fuse (op counts at level extended) and compute what the unfused
// model computes (reference EP); near misses stay as they are.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "common/model_builder.h"
#include "common/test_env.h"
#include "fusion_checks.h"

namespace loom {
namespace {

constexpr auto kFloat = ::onnx::TensorProto::FLOAT;
constexpr auto kInt64 = ::onnx::TensorProto::INT64;

using testing::expect_fuses;
using testing::expect_no_fusion;
using testing::op_counts;
using testing::session;
using testing::wave;

// ---- Attention ----
constexpr int64_t kB = 2, kS = 5, kD = 16;

struct AttnOptions {
  int64_t heads = 2;
  bool mask = true;
  float filter = -10000.f;         // the mask bias constant C
  enum { kDiv, kMul, kNone } scale = kDiv;
  float divisor = 0;               // 0: sqrt(H)
  std::vector<int64_t> k_perm = {0, 2, 3, 1};
  int64_t softmax_axis = -1;
  bool leak_scores = false;        // the scaled scores also a graph output
  bool v_one_head = false;         // V reshaped to [0, 0, 1, D]: heads inconsistent
  int64_t opset = 14;              // < 13: Unsqueeze axes as an attribute (one node, [1, 2])
  bool bias_first = true;          // Add(b, MatMul) rather than Add(MatMul, b)
};

std::string attention_model(const AttnOptions& o) {
  const int64_t n = o.heads, h = kD / n;
  testing::ModelBuilder m(o.opset);
  m.input("x", kFloat, {kB, kS, kD});
  if (o.mask) m.input("mask", kInt64, {kB, kS});
  m.output("y", kFloat, {});
  const char* names[] = {"q", "k", "v"};
  for (int i = 0; i < 3; ++i) {
    const std::string p = names[i];
    m.float_initializer("w" + p, {kD, kD}, wave(kD * kD, 0.3f, 1.f + static_cast<float>(i)));
    m.float_initializer("b" + p, {kD}, wave(kD, 0.2f, 2.f * static_cast<float>(i)));
    m.node("MatMul", {"x", "w" + p}, {p + "_mm"});
    if (o.bias_first) m.node("Add", {"b" + p, p + "_mm"}, {p + "_add"});
    else m.node("Add", {p + "_mm", "b" + p}, {p + "_add"});
    const bool one_head = i == 2 && o.v_one_head;
    m.int64_initializer("shape_" + p, {4}, {0, 0, one_head ? 1 : n, one_head ? kD : h});
    m.node("Reshape", {p + "_add", "shape_" + p}, {p + "_r"});
  }
  testing::add_ints_attr(m.node("Transpose", {"q_r"}, {"Q"}), "perm", {0, 2, 1, 3});
  testing::add_ints_attr(m.node("Transpose", {"k_r"}, {"KT"}), "perm", o.k_perm);
  testing::add_ints_attr(m.node("Transpose", {"v_r"}, {"V"}), "perm", {0, 2, 1, 3});
  m.node("MatMul", {"Q", "KT"}, {"s"});
  const float divisor = o.divisor != 0 ? o.divisor : std::sqrt(static_cast<float>(h));
  std::string scaled = "s";
  if (o.scale == AttnOptions::kDiv) {
    m.float_initializer("scale", {}, {divisor});
    m.node("Div", {"s", "scale"}, {"ss"});
    scaled = "ss";
  } else if (o.scale == AttnOptions::kMul) {
    m.float_initializer("scale", {}, {1.f / divisor});
    m.node("Mul", {"scale", "s"}, {"ss"});
    scaled = "ss";
  }
  std::string logits = scaled;
  if (o.mask) {
    m.float_initializer("one", {}, {1.f});
    m.float_initializer("filter", {}, {o.filter});
    if (o.opset < 13) {
      testing::add_ints_attr(m.node("Unsqueeze", {"mask"}, {"m2"}), "axes", {1, 2});
    } else {
      m.int64_initializer("ax1", {1}, {1});
      m.int64_initializer("ax2", {1}, {2});
      m.node("Unsqueeze", {"mask", "ax1"}, {"m1"});
      m.node("Unsqueeze", {"m1", "ax2"}, {"m2"});
    }
    testing::add_int_attr(m.node("Cast", {"m2"}, {"mf"}), "to", kFloat);
    m.node("Sub", {"one", "mf"}, {"inv"});
    m.node("Mul", {"inv", "filter"}, {"mask_bias"});
    m.node("Add", {scaled, "mask_bias"}, {"logits"});
    logits = "logits";
  }
  testing::add_int_attr(m.node("Softmax", {logits}, {"p"}), "axis", o.softmax_axis);
  m.node("MatMul", {"p", "V"}, {"c"});
  testing::add_ints_attr(m.node("Transpose", {"c"}, {"ct"}), "perm", {0, 2, 1, 3});
  m.int64_initializer("shape_out", {3}, {0, 0, o.v_one_head ? n * kD : kD});
  m.node("Reshape", {"ct", "shape_out"}, {"y"});
  if (o.leak_scores) m.output(scaled, kFloat, {});
  return m.bytes();
}

std::map<std::string, Tensor> attention_inputs(bool mask) {
  std::map<std::string, Tensor> in = {{"x", testing::float_tensor({kB, kS, kD}, wave(kB * kS * kD, 1.f, 0.3f))}};
  // Batch 1 masks its last two keys.
  if (mask) in["mask"] = Tensor::from_vector<int64_t>(DType::kInt64, {kB, kS}, {1, 1, 1, 1, 1, 1, 1, 1, 0, 0});
  return in;
}

const std::map<std::string, int> kMasked = {{"Cast", 1}, {"com.microsoft.Attention", 1}};
const std::map<std::string, int> kUnmasked = {{"com.microsoft.Attention", 1}};

TEST(AttentionFusionTest, BertSelfAttentionFuses) {
  for (int64_t heads : {2, 4}) {
    const std::string tag = std::to_string(heads) + " heads";
    AttnOptions o;
    o.heads = heads;
    expect_fuses(attention_model(o), attention_inputs(true), kMasked, tag + ", mask, Div");
    o.scale = AttnOptions::kMul;
    expect_fuses(attention_model(o), attention_inputs(true), kMasked, tag + ", mask, Mul");
    o.mask = false;
    expect_fuses(attention_model(o), attention_inputs(false), kUnmasked, tag + ", no mask, Mul");
    o.scale = AttnOptions::kDiv;
    o.bias_first = false;
    expect_fuses(attention_model(o), attention_inputs(false), kUnmasked, tag + ", no mask, Div, Add(mm, b)");
  }
}

TEST(AttentionFusionTest, ScaleMaskConstantAndOldOpsets) {
  AttnOptions other_scale;
  other_scale.divisor = 3.f;  // not sqrt(8): becomes the scale attribute
  expect_fuses(attention_model(other_scale), attention_inputs(true), kMasked, "divisor 3");
  AttnOptions no_scale;
  no_scale.scale = AttnOptions::kNone;
  expect_fuses(attention_model(no_scale), attention_inputs(true), kMasked, "no scale");
  AttnOptions lowest;  // HF's (1 - mask) * torch.finfo(float32).min
  lowest.filter = std::numeric_limits<float>::lowest();
  expect_fuses(attention_model(lowest), attention_inputs(true), kMasked, "mask constant float lowest");
  AttnOptions opset12;  // one Unsqueeze (axes attribute), Softmax axis 3 (the last)
  opset12.opset = 12;
  opset12.softmax_axis = 3;
  expect_fuses(attention_model(opset12), attention_inputs(true), kMasked, "opset 12");
}

TEST(AttentionFusionTest, MaskCastIsSharedByLayers) {
  // Two attention blocks in a row reading one mask bias: one Cast to int32.
  AttnOptions o;
  testing::ModelBuilder m(14);
  ::onnx::ModelProto one;
  ASSERT_TRUE(one.ParseFromString(attention_model(o)));
  auto* g = m.proto().mutable_graph();
  *g = one.graph();
  // Layer 2: copies of the projection/attention nodes reading y, writing y2.
  const int layer_nodes = g->node_size();
  for (int i = 0; i < layer_nodes; ++i) {
    ::onnx::NodeProto n = g->node(i);
    const bool mask_chain = n.op_type() == "Unsqueeze" || n.op_type() == "Cast" || n.op_type() == "Sub" ||
                            (n.op_type() == "Mul" && n.output(0) == "mask_bias");
    if (mask_chain) continue;
    n.set_name(n.name() + "_2");
    for (auto& in : *n.mutable_input())
      if (in == "x") in = "y";
      else if (in != "mask_bias" && !in.empty() && in.rfind("w", 0) != 0 && in.rfind("b", 0) != 0 &&
               in.rfind("shape", 0) != 0 && in != "scale")
        in += "_2";
    for (auto& out : *n.mutable_output()) out += "_2";
    *g->add_node() = n;
  }
  g->mutable_output(0)->set_name("y_2");
  expect_fuses(m.bytes(), attention_inputs(true), {{"Cast", 1}, {"com.microsoft.Attention", 2}}, "two layers");
}

TEST(AttentionFusionTest, NearMisses) {
  // K^T = Transpose(K_r, [0, 3, 2, 1]) is [B, H, N, S]: with N == H (4 heads
  // of 4) Q x that is a valid graph, mixing heads: not attention.
  AttnOptions wrong_k;
  wrong_k.heads = 4;
  wrong_k.k_perm = {0, 3, 2, 1};
  expect_no_fusion(attention_model(wrong_k), attention_inputs(true), "Softmax", "K transposed [0, 3, 2, 1]");
  AttnOptions axis1;
  axis1.softmax_axis = 1;
  expect_no_fusion(attention_model(axis1), attention_inputs(true), "Softmax", "Softmax over axis 1");
  AttnOptions leak;
  leak.leak_scores = true;
  expect_no_fusion(attention_model(leak), attention_inputs(true), "Softmax", "scores also a graph output");
  AttnOptions one_head_v;
  one_head_v.v_one_head = true;
  expect_no_fusion(attention_model(one_head_v), attention_inputs(true), "Softmax", "V with 1 head, Q/K with 2");
  AttnOptions weak_mask;
  weak_mask.filter = -1.f;  // replacing by -1 is not adding -1
  expect_no_fusion(attention_model(weak_mask), attention_inputs(true), "Softmax", "mask constant -1");
}

// ---- FastGelu ----
// cube 0: Pow(x, 3) * c; 1: c * (x * (x * x)); 2: ((x * c) * x) * x
// outer 0: (x * 0.5) * (1 + t); 1: 0.5 * (x * (1 + t))
std::string fast_gelu_model(int cube, int outer, bool bias, float c3 = 0.044715f, bool leak_tanh = false) {
  testing::ModelBuilder m(17);
  m.input("in", kFloat, {2, 4, 6});
  m.output("y", kFloat, {});
  m.float_initializer("b", {6}, wave(6, 0.3f));
  m.float_initializer("three", {}, {3.f});
  m.float_initializer("c3", {}, {c3});
  m.float_initializer("k", {}, {0.7978845608f});
  m.float_initializer("one", {}, {1.f});
  m.float_initializer("half", {}, {0.5f});
  if (bias) m.node("Add", {"in", "b"}, {"x"});
  else m.node("Identity", {"in"}, {"x"});
  if (cube == 0) {
    m.node("Pow", {"x", "three"}, {"x3"});
    m.node("Mul", {"x3", "c3"}, {"t"});
  } else if (cube == 1) {
    m.node("Mul", {"x", "x"}, {"x2"});
    m.node("Mul", {"x", "x2"}, {"x3"});
    m.node("Mul", {"c3", "x3"}, {"t"});
  } else {
    m.node("Mul", {"x", "c3"}, {"xc"});
    m.node("Mul", {"xc", "x"}, {"xcx"});
    m.node("Mul", {"xcx", "x"}, {"t"});
  }
  m.node("Add", {"x", "t"}, {"u"});
  m.node("Mul", {"k", "u"}, {"ku"});
  m.node("Tanh", {"ku"}, {"th"});
  m.node("Add", {"one", "th"}, {"a"});
  if (outer == 0) {
    m.node("Mul", {"x", "half"}, {"xh"});
    m.node("Mul", {"xh", "a"}, {"y"});
  } else {
    m.node("Mul", {"x", "a"}, {"xa"});
    m.node("Mul", {"half", "xa"}, {"y"});
  }
  if (leak_tanh) m.output("th", kFloat, {});
  return m.bytes();
}

std::map<std::string, Tensor> gelu_inputs() { return {{"in", testing::float_tensor({2, 4, 6}, wave(48, 3.f))}}; }

TEST(FastGeluFusionTest, TanhGeluForms) {
  for (int cube : {0, 1, 2})
    for (int outer : {0, 1}) {
      const std::string tag = "cube " + std::to_string(cube) + " outer " + std::to_string(outer);
      expect_fuses(fast_gelu_model(cube, outer, false), gelu_inputs(), {{"com.microsoft.FastGelu", 1}}, tag);
      expect_fuses(fast_gelu_model(cube, outer, true), gelu_inputs(), {{"com.microsoft.FastGelu", 1}},
                   tag + " with bias");
    }
}

TEST(FastGeluFusionTest, NearMisses) {
  expect_no_fusion(fast_gelu_model(0, 0, false, 0.05f), gelu_inputs(), "Tanh", "0.05 instead of 0.044715");
  expect_no_fusion(fast_gelu_model(1, 0, false, 0.05f), gelu_inputs(), "Tanh", "0.05, x * x * x");
  expect_no_fusion(fast_gelu_model(0, 1, false, 0.044715f, true), gelu_inputs(), "Tanh", "Tanh also an output");
}

}  // namespace
}  // namespace loom
