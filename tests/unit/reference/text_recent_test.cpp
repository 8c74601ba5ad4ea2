// The opset-20 string ops on the reference EP: StringConcat, StringSplit
// (Python's str.split semantics), RegexFullMatch, and Equal-19 on strings;
// near-misses (bad attributes, over-long regex input) refused clearly.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "unit/reference/one_node_model.h"

namespace loom {
namespace {

using ::onnx::TensorProto;
using testing::OneNodeModel;

Tensor strings(Dims dims, std::vector<std::string> v) { return Tensor::from_strings(std::move(dims), std::move(v)); }

TEST(TextRecentTest, StringConcatBroadcasts) {
  OneNodeModel g("StringConcat", 20, {{"x", strings({2}, {"a", "bc"})}, {"y", strings({}, {"!"})}},
                 {{"z", TensorProto::STRING}});
  auto out = g.run();
  ASSERT_TRUE(out.has_value()) << out.status().message();
  EXPECT_EQ((*out)[0].strings(), (std::vector<std::string>{"a!", "bc!"}));
  OneNodeModel bad("StringConcat", 20, {{"x", strings({2}, {"a", "b"})}, {"y", strings({3}, {"1", "2", "3"})}},
                   {{"z", TensorProto::STRING}});
  EXPECT_FALSE(bad.run().has_value());
}

TEST(TextRecentTest, StringSplitFollowsPythonSplit) {
  struct Case {
    std::string delimiter;
    int64_t maxsplit;
    std::vector<std::string> pieces;  // [2, widest], padded
    std::vector<int64_t> counts;
  };
  const std::vector<Case> cases = {
      {"", -1, {"a", "b", "c", "", "", ""}, {3, 0}},        // whitespace runs, empty string has no pieces
      {"", 1, {"a", "b  c ", "", ""}, {2, 0}},              // the rest keeps its trailing whitespace
      {"-", -1, {"", "a", "", "b  c ", "", "", "", ""}, {4, 1}},
  };
  for (const Case& c : cases) {
    const std::vector<std::string> in =
        c.delimiter.empty() ? std::vector<std::string>{"  a b  c ", ""} : std::vector<std::string>{"-a--b  c ", ""};
    OneNodeModel g("StringSplit", 20, {{"x", strings({2}, in)}}, {{"y", TensorProto::STRING}, {"n", TensorProto::INT64}});
    if (!c.delimiter.empty()) g.attr("delimiter", c.delimiter);
    if (c.maxsplit >= 0) g.attr("maxsplit", c.maxsplit);
    auto out = g.run();
    ASSERT_TRUE(out.has_value()) << out.status().message();
    EXPECT_EQ((*out)[0].strings(), c.pieces) << "delimiter '" << c.delimiter << "' maxsplit " << c.maxsplit;
    EXPECT_EQ(testing::int64_values_of((*out)[1]), c.counts);
  }
  OneNodeModel bad("StringSplit", 20, {{"x", strings({1}, {"a b"})}}, {{"y", TensorProto::STRING}, {"n", TensorProto::INT64}});
  bad.attr("maxsplit", int64_t{-2});
  auto refused = bad.run();
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.status().message().find("maxsplit must be non-negative"), std::string::npos);
}

TEST(TextRecentTest, RegexFullMatchMatchesWholeStringsAndRefusesWhatItCannotRun) {
  OneNodeModel g("RegexFullMatch", 20, {{"x", strings({3}, {"www.a-b.com", "www.a.com/x", "x"})}},
                 {{"y", TensorProto::BOOL}});
  g.attr("pattern", std::string(R"(www\.[\w.-]+\.\bcom\b)"));
  auto out = g.run();
  ASSERT_TRUE(out.has_value()) << out.status().message();
  const bool* y = (*out)[0].data_as<bool>();
  EXPECT_TRUE(y[0]);
  EXPECT_FALSE(y[1]);  // a full match, not a search
  EXPECT_FALSE(y[2]);
  OneNodeModel invalid("RegexFullMatch", 20, {{"x", strings({1}, {"a"})}}, {{"y", TensorProto::BOOL}});
  invalid.attr("pattern", std::string("(unclosed"));
  auto refused = invalid.run();
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.status().message().find("invalid pattern"), std::string::npos) << refused.status().message();
  OneNodeModel long_input("RegexFullMatch", 20, {{"x", strings({1}, {std::string(100000, 'a')})}},
                          {{"y", TensorProto::BOOL}});
  long_input.attr("pattern", std::string("(a|b)*"));
  auto too_long = long_input.run();
  ASSERT_FALSE(too_long.has_value());
  EXPECT_NE(too_long.status().message().find("over the limit"), std::string::npos) << too_long.status().message();
}

TEST(TextRecentTest, EqualComparesStrings) {
  OneNodeModel g("Equal", 19, {{"a", strings({2, 2}, {"x", "y", "x", "z"})}, {"b", strings({2}, {"x", "z"})}},
                 {{"c", TensorProto::BOOL}});
  auto out = g.run();
  ASSERT_TRUE(out.has_value()) << out.status().message();
  const bool* c = (*out)[0].data_as<bool>();
  EXPECT_EQ(std::vector<bool>(c, c + 4), (std::vector<bool>{true, false, true, true}));
}

}  // namespace
}  // namespace loom
