// String kernels of the reference EP (StringNormalizer, TfIdfVectorizer)
// through the public API, beyond what the ONNX node suite covers: UTF-8 case
// mapping, case-insensitive stopwords, string pools, IDF/TFIDF weighting and
// clear errors on bad input.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/model_builder.h"
#include "common/test_env.h"

namespace loom {
namespace {

using ::onnx::AttributeProto;
using ::onnx::NodeProto;
using ::onnx::TensorProto;

Expected<std::vector<Tensor>> run_model(const std::string& bytes, const std::string& input, Tensor x) {
  auto s = Session::create_from_bytes(testing::reference_env(), bytes);
  if (!s.has_value()) return s.status();
  return (*s)->run({{input, std::move(x)}});
}

// StringNormalizer over a [dims] string input.
Expected<std::vector<Tensor>> normalize(const std::vector<std::string>& in, Dims dims, const std::string& action,
                                        int64_t case_sensitive, const std::vector<std::string>& stopwords) {
  testing::ModelBuilder m(10);
  m.input("x", TensorProto::STRING, dims);
  NodeProto& n = m.node("StringNormalizer", {"x"}, {"y"});
  testing::add_string_attr(n, "case_change_action", action);
  testing::add_int_attr(n, "is_case_sensitive", case_sensitive);
  if (!stopwords.empty()) testing::add_strings_attr(n, "stopwords", stopwords);
  m.output("y", TensorProto::STRING, std::vector<int64_t>(dims.size(), -1));
  return run_model(m.bytes(), "x", Tensor::from_strings(dims, in));
}

TEST(TextKernelTest, StringNormalizerMapsUtf8Case) {
  auto up = normalize({"café", "Straße", "ÿes", "привет", "αβγ", "x\xff"}, {6}, "UPPER", 1, {});
  ASSERT_TRUE(up.has_value()) << up.status().message();
  EXPECT_EQ((*up)[0].strings(),
            (std::vector<std::string>{"CAFÉ", "STRAßE", "ŸES", "ПРИВЕТ", "ΑΒΓ", "X\xff"}));
  auto low = normalize({"ÉCOLE", "ŁÓDŹ", "MIXED case"}, {3}, "LOWER", 1, {});
  ASSERT_TRUE(low.has_value()) << low.status().message();
  EXPECT_EQ((*low)[0].strings(), (std::vector<std::string>{"école", "łódź", "mixed case"}));
}

TEST(TextKernelTest, StringNormalizerStopwordsRespectCaseSensitivity) {
  auto insensitive = normalize({"The", "cat", "THE", "Éte", "éte"}, {1, 5}, "NONE", 0, {"the", "ÉTE"});
  ASSERT_TRUE(insensitive.has_value()) << insensitive.status().message();
  EXPECT_EQ((*insensitive)[0].dims(), (Dims{1, 1}));
  EXPECT_EQ((*insensitive)[0].strings(), (std::vector<std::string>{"cat"}));

  auto sensitive = normalize({"The", "cat", "the"}, {3}, "LOWER", 1, {"the"});
  ASSERT_TRUE(sensitive.has_value()) << sensitive.status().message();
  EXPECT_EQ((*sensitive)[0].strings(), (std::vector<std::string>{"the", "cat"}));
}

TEST(TextKernelTest, StringNormalizerEmptyResultKeepsRank) {
  auto two_d = normalize({"a", "A"}, {1, 2}, "UPPER", 0, {"a"});
  ASSERT_TRUE(two_d.has_value()) << two_d.status().message();
  EXPECT_EQ((*two_d)[0].dims(), (Dims{1, 1}));
  EXPECT_EQ((*two_d)[0].strings(), (std::vector<std::string>{""}));
  auto one_d = normalize({"a"}, {1}, "NONE", 1, {"a"});
  ASSERT_TRUE(one_d.has_value()) << one_d.status().message();
  EXPECT_EQ((*one_d)[0].dims(), (Dims{1}));
}

TEST(TextKernelTest, StringNormalizerRefusesOtherShapes) {
  auto bad = normalize({"a", "b", "c", "d"}, {2, 2}, "NONE", 1, {});
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.status().message().find("StringNormalizer"), std::string::npos) << bad.status().message();
}

// TfIdfVectorizer with a string pool: unigrams {a, b}, bigrams {(a,b), (b,c)}.
std::string tfidf_model(const std::string& mode, const std::vector<float>& weights, int64_t max_skip,
                        int32_t elem_type, bool int_pool = false) {
  testing::ModelBuilder m(17);
  m.input("x", elem_type, {-1, -1});
  NodeProto& n = m.node("TfIdfVectorizer", {"x"}, {"y"});
  testing::add_string_attr(n, "mode", mode);
  testing::add_int_attr(n, "min_gram_length", 1);
  testing::add_int_attr(n, "max_gram_length", 2);
  testing::add_int_attr(n, "max_skip_count", max_skip);
  testing::add_ints_attr(n, "ngram_counts", {0, 2});
  testing::add_ints_attr(n, "ngram_indexes", {3, 2, 1, 0});
  if (int_pool) testing::add_ints_attr(n, "pool_int64s", {1, 2, 1, 2, 2, 3});
  else testing::add_strings_attr(n, "pool_strings", {"a", "b", "a", "b", "b", "c"});
  if (!weights.empty()) testing::add_floats_attr(n, "weights", weights);
  m.output("y", TensorProto::FLOAT, {-1, -1});
  return m.bytes();
}

std::vector<float> floats(const Tensor& t) { return testing::values_of(t); }

TEST(TextKernelTest, TfIdfVectorizerCountsStringNgrams) {
  // Row 0: a b c a b -> a:2 b:2 (a,b):2 (b,c):1; row 1: c a x b -> a:1 b:1 (skip 1: (a,b):1).
  Tensor x = Tensor::from_strings({2, 5}, {"a", "b", "c", "a", "b", "c", "a", "x", "b", "zz"});
  auto tf = run_model(tfidf_model("TF", {}, 0, TensorProto::STRING), "x", x);
  ASSERT_TRUE(tf.has_value()) << tf.status().message();
  EXPECT_EQ((*tf)[0].dims(), (Dims{2, 4}));
  // Columns: 3 <- a, 2 <- b, 1 <- (a,b), 0 <- (b,c).
  EXPECT_EQ(floats((*tf)[0]), (std::vector<float>{1, 2, 2, 2, 0, 0, 1, 1}));

  auto skip = run_model(tfidf_model("TF", {}, 1, TensorProto::STRING), "x", x);
  ASSERT_TRUE(skip.has_value()) << skip.status().message();
  // Skip 1 adds (a,c),(b,a),(c,b) in row 0 (none in the pool) and (a,b) in row 1.
  EXPECT_EQ(floats((*skip)[0]), (std::vector<float>{1, 2, 2, 2, 0, 1, 1, 1}));
}

TEST(TextKernelTest, TfIdfVectorizerWeightsByOutputColumn) {
  Tensor x = Tensor::from_strings({1, 5}, {"a", "b", "c", "a", "b"});
  const std::vector<float> w = {0.5f, 0.25f, 2.0f, 3.0f};
  auto idf = run_model(tfidf_model("IDF", w, 0, TensorProto::STRING), "x", x);
  ASSERT_TRUE(idf.has_value()) << idf.status().message();
  EXPECT_EQ(floats((*idf)[0]), (std::vector<float>{0.5f, 0.25f, 2.0f, 3.0f}));
  auto tfidf = run_model(tfidf_model("TFIDF", w, 0, TensorProto::STRING), "x", x);
  ASSERT_TRUE(tfidf.has_value()) << tfidf.status().message();
  EXPECT_EQ(floats((*tfidf)[0]), (std::vector<float>{0.5f, 0.5f, 4.0f, 6.0f}));
  auto idf_plain = run_model(tfidf_model("IDF", {}, 0, TensorProto::STRING), "x", x);
  ASSERT_TRUE(idf_plain.has_value()) << idf_plain.status().message();
  EXPECT_EQ(floats((*idf_plain)[0]), (std::vector<float>{1, 1, 1, 1}));
}

TEST(TextKernelTest, TfIdfVectorizerInt64Pool) {
  Tensor x = Tensor::from_vector(DType::kInt64, {1, 5}, std::vector<int64_t>{1, 2, 3, 1, 2});
  auto tf = run_model(tfidf_model("TF", {}, 0, TensorProto::INT64, true), "x", x);
  ASSERT_TRUE(tf.has_value()) << tf.status().message();
  EXPECT_EQ(floats((*tf)[0]), (std::vector<float>{1, 2, 2, 2}));
}

TEST(TextKernelTest, TfIdfVectorizerRefusesWrongInputType) {
  Tensor x = Tensor::from_vector(DType::kInt64, {1, 2}, std::vector<int64_t>{1, 2});
  auto r = run_model(tfidf_model("TF", {}, 0, TensorProto::INT64), "x", x);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.status().message().find("TfIdfVectorizer"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace loom
