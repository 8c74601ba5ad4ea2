// com.microsoft EmbedLayerNormalization on cpu_onednn (host gather steps +
// oneDNN layer_normalization) vs the reference EP (ORT 1.30 semantics):
// several shapes, with / without segment embedding, mask and position_ids,
// int32 ids (int64 ones are left to the reference EP, which refuses them as
// ONNX Runtime does), and out-of-range ids failing with a clear error.
#include "ep_compare.h"

namespace loom::ep_testing {
namespace {

constexpr char kMs[] = "com.microsoft";
constexpr auto kInt32 = ::onnx::TensorProto::INT32;
constexpr auto kInt64 = ::onnx::TensorProto::INT64;

struct EmbedCase {
  int64_t batch, seq, hidden;
  bool segment, mask, position_ids, sum_output;
};
constexpr int64_t kVocab = 30, kPositions = 24, kTypes = 3;

std::string embed_model(const EmbedCase& c, int32_t ids_type) {
  testing::ModelBuilder m(17);
  m.import_domain(kMs, 1);
  const std::vector<int64_t> bs = {c.batch, c.seq};
  m.input("ids", ids_type, bs);
  if (c.segment) m.input("seg_ids", ids_type, bs);
  if (c.mask) m.input("mask", kInt32, bs);
  if (c.position_ids) m.input("pos_ids", ids_type, {1, c.seq});
  random_weights(m, "word", {kVocab, c.hidden}, 1);
  random_weights(m, "pos", {kPositions, c.hidden}, 2);
  random_weights(m, "seg", {kTypes, c.hidden}, 3);
  m.float_initializer("gamma", {c.hidden}, random_values(static_cast<size_t>(c.hidden), 4, 0.5f, 1.5f));
  m.float_initializer("beta", {c.hidden}, random_values(static_cast<size_t>(c.hidden), 5));
  auto& n = m.node("EmbedLayerNormalization", {}, {"y", "mask_index"}, "embed", kMs);
  for (const std::string in : {"ids", c.segment ? "seg_ids" : "", "word", "pos", c.segment ? "seg" : "", "gamma",
                               "beta", c.mask ? "mask" : "", c.position_ids ? "pos_ids" : ""})
    n.add_input(in);
  while (n.input(n.input_size() - 1).empty()) n.mutable_input()->RemoveLast();
  if (c.sum_output) n.add_output("sum");
  add_float_attr(n, "epsilon", 1e-5f);
  m.output("y", kFloat, {});
  m.output("mask_index", kInt32, {});
  if (c.sum_output) m.output("sum", kFloat, {});
  return m.bytes();
}

// Deterministic int32 ids in [0, limit).
Tensor ids_tensor(const std::vector<int64_t>& dims, int64_t limit, uint32_t seed) {
  std::vector<int32_t> v(static_cast<size_t>(count(dims)));
  uint32_t s = seed * 2654435761u + 7u;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<int32_t>((s >> 8) % static_cast<uint32_t>(limit));
  }
  return Tensor::from_vector<int32_t>(DType::kInt32, dims, v);
}

std::map<std::string, Tensor> embed_inputs(const EmbedCase& c) {
  const std::vector<int64_t> bs = {c.batch, c.seq};
  std::map<std::string, Tensor> in = {{"ids", ids_tensor(bs, kVocab, 1)}};
  if (c.segment) in["seg_ids"] = ids_tensor(bs, kTypes, 2);
  if (c.mask) in["mask"] = ids_tensor(bs, 2, 3);  // 0 / 1
  if (c.position_ids) in["pos_ids"] = ids_tensor({1, c.seq}, kPositions, 4);
  return in;
}

void expect_embed_matches(const EmbedCase& c, const std::string& what) {
  const std::string model = embed_model(c, kInt32);
  auto onednn = make_session(onednn_env(), model);
  auto reference = make_session(reference_env(), model);
  ASSERT_TRUE(onednn && reference) << what;
  for (const auto& n : onednn->placement().nodes) EXPECT_EQ(n.provider, "cpu_onednn") << what << ": " << n.node_name;
  auto got = onednn->run(embed_inputs(c));
  auto want = reference->run(embed_inputs(c));
  ASSERT_TRUE(want.has_value()) << what << ": reference: " << want.status().message();
  ASSERT_TRUE(got.has_value()) << what << ": cpu_onednn: " << got.status().message();
  ASSERT_EQ(got->size(), want->size()) << what;
  expect_close((*want)[0], (*got)[0], {1e-4, 1e-4}, what + " output");
  ASSERT_EQ((*got)[1].dtype(), DType::kInt32) << what;
  ASSERT_EQ((*got)[1].dims(), (*want)[1].dims()) << what;
  for (int64_t b = 0; b < c.batch; ++b)
    EXPECT_EQ((*got)[1].data_as<int32_t>()[b], (*want)[1].data_as<int32_t>()[b]) << what << " mask_index " << b;
  if (c.sum_output) expect_close((*want)[2], (*got)[2], {1e-5, 1e-6}, what + " embedding_sum");
}

TEST(OnednnContrib, EmbedLayerNormalizationMatchesReference) {
  const EmbedCase cases[] = {
      {2, 5, 16, true, true, false, false},   {1, 7, 32, false, false, false, false},
      {3, 4, 8, true, false, true, true},      {2, 1, 64, false, true, true, false},
      {1, 24, 768, true, true, false, true},
  };
  for (size_t i = 0; i < std::size(cases); ++i) {
    const EmbedCase& c = cases[i];
    expect_embed_matches(c,
                         "case " + std::to_string(i) + " [" + std::to_string(c.batch) + ", " + std::to_string(c.seq) +
                             ", " + std::to_string(c.hidden) + "]");
  }
}

TEST(OnednnContrib, EmbedLayerNormalizationWithInt64IdsIsLeftToTheReference) {
  auto s = make_session(environment({"cpu_onednn", "reference"}, FallbackPolicy::kAllow),
                        embed_model({2, 5, 16, true, true, false, false}, kInt64));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->placement().nodes.at(0).provider, "reference");
  EXPECT_NE(s->placement().nodes.at(0).reason.find("int32"), std::string::npos) << s->placement().nodes.at(0).reason;
}

TEST(OnednnContrib, EmbedLayerNormalizationRejectsOutOfRangeIds) {
  const EmbedCase c = {2, 3, 16, true, false, false, false};
  {
    auto s = make_session(onednn_env(), embed_model(c, kInt32));
    ASSERT_TRUE(s);
    auto in = embed_inputs(c);
    auto bad = [&](const std::string& name, int64_t index, int32_t value, const std::string& want) {
      std::map<std::string, Tensor> x = in;
      const Tensor& src = x.at(name);  // Tensor copies share bytes: copy them
      Tensor t = Tensor::from_bytes(src.dtype(), src.dims(), src.data(), src.byte_size()).value();
      t.mutable_data_as<int32_t>()[index] = value;
      x[name] = t;
      auto r = s->run(x);
      ASSERT_FALSE(r.has_value()) << name << " " << value;
      EXPECT_NE(r.status().message().find(want), std::string::npos) << r.status().message();
    };
    bad("ids", 4, kVocab, "input_ids value 30 at [1, 1] out of range [0, 30)");
    bad("ids", 0, -1, "input_ids value -1 at [0, 0] out of range");
    bad("seg_ids", 5, kTypes, "segment_ids value 3 at [1, 2] out of range [0, 3)");
    // The session still runs good inputs afterwards.
    auto ok = s->run(in);
    EXPECT_TRUE(ok.has_value()) << ok.status().message();
  }
  // A sequence longer than the position table.
  const EmbedCase long_seq = {1, kPositions + 1, 8, false, false, false, false};
  auto s = make_session(onednn_env(), embed_model(long_seq, kInt32));
  ASSERT_TRUE(s);
  auto r = s->run(embed_inputs(long_seq));
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.status().message().find("position 24 at [0, 24] out of range [0, 24)"), std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace loom::ep_testing
