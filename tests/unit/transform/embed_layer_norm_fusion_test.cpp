// embed_layer_norm_fusion: the BERT embedding block as torch.onnx.export
// writes it (word + sliced-arange positions (+ token types) then
// LayerNormalization) fuses into com.microsoft EmbedLayerNormalization (op
// counts at level extended) and computes what the unfused model computes
// (reference EP); near misses stay as they are.
#include <gtest/gtest.h>

#include "common/model_builder.h"
#include "common/test_env.h"
#include "fusion_checks.h"

namespace loom {
namespace {

constexpr auto kFloat = ::onnx::TensorProto::FLOAT;
constexpr auto kInt64 = ::onnx::TensorProto::INT64;

using testing::expect_fuses;
using testing::expect_no_fusion;
using testing::wave;

constexpr int64_t kB = 2, kS = 5, kH = 8, kVocab = 20, kMaxPos = 16;

struct EmbedOptions {
  enum { kNone, kRuntime, kConstant } segment = kConstant;  // token types
  int64_t pos_start = 0;     // the Slice's start on the positions
  int64_t ln_axis = -1;
  bool leak_word = false;    // the word embedding also a graph output
  bool static_seq = false;   // input_ids [B, S] static (S via a constant end)
  bool skip_ln = false;      // SkipLayerNormalization(word + pos, seg) instead of LayerNormalization
};

std::string embed_model(const EmbedOptions& o) {
  testing::ModelBuilder m(17);
  const int64_t s_dim = o.static_seq ? kS : -1;
  m.input("input_ids", kInt64, {kB, s_dim});
  if (o.segment == EmbedOptions::kRuntime) m.input("token_type_ids", kInt64, {kB, s_dim});
  m.output("y", kFloat, {});
  if (o.leak_word) m.output("we", kFloat, {kB, s_dim, kH});
  m.float_initializer("word", {kVocab, kH}, wave(kVocab * kH, 1.f, 0.1f));
  m.float_initializer("pos", {kMaxPos, kH}, wave(kMaxPos * kH, 0.5f, 1.3f));
  m.float_initializer("seg", {2, kH}, wave(2 * kH, 0.3f, 2.1f));
  const std::vector<int64_t> ln_dims = o.ln_axis == 1 ? std::vector<int64_t>{kS, kH} : std::vector<int64_t>{kH};
  const int64_t ln_count = o.ln_axis == 1 ? kS * kH : kH;
  m.float_initializer("gamma", ln_dims, wave(static_cast<size_t>(ln_count), 0.5f, 0.7f));
  m.float_initializer("beta", ln_dims, wave(static_cast<size_t>(ln_count), 0.2f, 0.4f));
  std::vector<int64_t> arange(kMaxPos), types(kMaxPos);
  for (int64_t i = 0; i < kMaxPos; ++i) {
    arange[static_cast<size_t>(i)] = i;
    types[static_cast<size_t>(i)] = i % 3 == 2 ? 1 : 0;
  }
  m.int64_initializer("position_ids", {1, kMaxPos}, arange);
  m.int64_initializer("type_ids", {1, kMaxPos}, types);
  m.int64_initializer("start", {1}, {o.pos_start});
  m.int64_initializer("zero", {1}, {0});
  m.int64_initializer("one", {1}, {1});
  m.int64_initializer("one_scalar", {}, {1});
  std::string end = "end";
  if (o.static_seq) {
    m.int64_initializer("end", {1}, {kS + o.pos_start});
  } else {
    m.node("Shape", {"input_ids"}, {"shape"});
    m.node("Gather", {"shape", "one_scalar"}, {"seq"});
    m.node("Unsqueeze", {"seq", "zero"}, {"seq1"});
    end = "seq1";
    if (o.pos_start != 0) {
      m.node("Add", {"seq1", "start"}, {"end"});
      end = "end";
    }
  }
  m.node("Slice", {"position_ids", "start", end, "one", "one"}, {"pid"});
  m.node("Gather", {"word", "input_ids"}, {"we"});
  m.node("Gather", {"pos", "pid"}, {"pe"});
  std::string sum = "sum";
  std::string seg_out;
  if (o.segment == EmbedOptions::kRuntime) {
    m.node("Gather", {"seg", "token_type_ids"}, {"se"});
    seg_out = "se";
  } else if (o.segment == EmbedOptions::kConstant) {
    m.int64_initializer("seq_end", {1}, {kS});
    m.node("Slice", {"type_ids", "zero", o.static_seq ? "seq_end" : "seq1", "one", "one"}, {"tid"});
    m.node("Gather", {"seg", "tid"}, {"se"});
    seg_out = "se";
  }
  m.node("Add", {"we", "pe"}, {seg_out.empty() ? "sum" : "wp"});
  if (o.skip_ln) {
    auto& n = m.node("SkipLayerNormalization", {"wp", seg_out, "gamma", "beta"}, {"y"}, "", "com.microsoft");
    auto* a = n.add_attribute();
    a->set_name("epsilon");
    a->set_type(::onnx::AttributeProto::FLOAT);
    a->set_f(1e-12f);
    m.import_domain("com.microsoft", 1);
    return m.bytes();
  }
  if (!seg_out.empty()) m.node("Add", {seg_out, "wp"}, {"sum"});  // segment first: any Add order
  auto& ln = m.node("LayerNormalization", {sum, "gamma", "beta"}, {"y"});
  testing::add_int_attr(ln, "axis", o.ln_axis);
  return m.bytes();
}

std::map<std::string, Tensor> embed_inputs(bool token_types) {
  std::map<std::string, Tensor> in = {
      {"input_ids", Tensor::from_vector<int64_t>(DType::kInt64, {kB, kS}, {3, 7, 19, 0, 5, 1, 1, 12, 8, 2})}};
  if (token_types)
    in["token_type_ids"] = Tensor::from_vector<int64_t>(DType::kInt64, {kB, kS}, {0, 0, 1, 1, 1, 0, 1, 0, 1, 0});
  return in;
}

const std::string kEmbed = "com.microsoft.EmbedLayerNormalization";

TEST(EmbedLayerNormFusionTest, BertEmbeddingsFuse) {
  EmbedOptions o;  // constant token types: folded into the position table
  expect_fuses(embed_model(o), embed_inputs(false), {{"Cast", 1}, {kEmbed, 1}}, "constant token types");
  o.segment = EmbedOptions::kRuntime;
  expect_fuses(embed_model(o), embed_inputs(true), {{"Cast", 2}, {kEmbed, 1}}, "token types input");
  o.segment = EmbedOptions::kNone;
  expect_fuses(embed_model(o), embed_inputs(false), {{"Cast", 1}, {kEmbed, 1}}, "no segment embedding");
  o.segment = EmbedOptions::kConstant;
  o.static_seq = true;
  expect_fuses(embed_model(o), embed_inputs(false), {{"Cast", 1}, {kEmbed, 1}}, "static sequence length");
  o.static_seq = false;
  o.skip_ln = true;
  expect_fuses(embed_model(o), embed_inputs(false), {{"Cast", 1}, {kEmbed, 1}}, "SkipLayerNormalization form");
  testing::expect_listed_pass("embed_layer_norm_fusion", OptimizationLevel::kExtended);
}

TEST(EmbedLayerNormFusionTest, NearMisses) {
  EmbedOptions from_one;  // positions 1..S
  from_one.pos_start = 1;
  expect_no_fusion(embed_model(from_one), embed_inputs(false), "LayerNormalization", "positions from 1");
  // With a static S constant folding leaves a constant [1, S, H] summand (rows
  // 1..S of the table): exact as a position table of S rows, so it fuses.
  from_one.static_seq = true;
  expect_fuses(embed_model(from_one), embed_inputs(false), {{"Cast", 1}, {kEmbed, 1}}, "folded positions from 1");
  EmbedOptions axis1;  // normalised over [S, H]
  axis1.ln_axis = 1;
  axis1.static_seq = true;
  expect_no_fusion(embed_model(axis1), embed_inputs(false), "LayerNormalization", "LayerNorm axis 1");
  EmbedOptions leak;  // the word embedding read elsewhere
  leak.leak_word = true;
  expect_no_fusion(embed_model(leak), embed_inputs(false), "LayerNormalization", "word embedding read elsewhere");
}

}  // namespace
}  // namespace loom
