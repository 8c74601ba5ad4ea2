// Slice (unit steps), Split and Gather on cpu_onednn vs the reference EP: indices
// as attributes (Slice-1, Split before 13) and constant inputs, negative and
// out-of-range ones clamped, equal and explicit splits, and a slice that is
// empty for a run's shapes running on the fallback provider.
#include "ep_compare.h"

namespace loom::ep_testing {
namespace {

struct SliceCase {
  std::string what;
  std::vector<int64_t> x;
  std::vector<int64_t> starts, ends, axes;
  int opset = 13;
};

std::string slice_model(const SliceCase& c) {
  testing::ModelBuilder m(c.opset);
  m.input("x", kFloat, c.x);
  m.node("Relu", {"x"}, {"r"});
  if (c.opset < 10) {
    auto& n = m.node("Slice", {"r"}, {"s"});
    add_ints_attr(n, "starts", c.starts);
    add_ints_attr(n, "ends", c.ends);
    if (!c.axes.empty()) add_ints_attr(n, "axes", c.axes);
  } else {
    int64_initializer(m, "starts", c.starts);
    int64_initializer(m, "ends", c.ends);
    std::vector<std::string> in = {"r", "starts", "ends"};
    if (!c.axes.empty()) {
      int64_initializer(m, "axes", c.axes);
      in.push_back("axes");
    }
    m.node("Slice", in, {"s"});
  }
  m.node("Sigmoid", {"s"}, {"y"});
  m.output("y", kFloat, {});
  return m.bytes();
}

TEST(OnednnSlice, MatchesTheReference) {
  const std::vector<SliceCase> cases = {
      {"channels 2..5", {1, 8, 6, 6}, {2}, {5}, {1}},
      {"last dim from the end", {2, 3, 10}, {-4}, {1000}, {-1}},
      {"two axes, ends past the end", {1, 4, 9, 9}, {1, 3}, {100, 7}, {2, 3}},
      {"no axes: the leading dims", {6, 5}, {1, 0}, {4, 2}, {}},
      {"Slice-1 attributes", {4, 6}, {1}, {-1}, {1}, 9},
  };
  for (const SliceCase& c : cases) {
    ProfiledParts parts;
    expect_matches_reference(slice_model(c), {{"x", random_tensor(c.x, 51, -1.f, 1.f)}}, {}, c.what, onednn_env(),
                             &parts);
    EXPECT_EQ(parts.count("reorder"), 1u) << c.what << ": one window copied";
  }
}

TEST(OnednnSlice, AnEmptyResultRunsOnTheFallbackProvider) {
  // Dims unknown at claim time; for x of width 3 the window [4, 6) is empty.
  SliceCase c{"empty", {1, -1}, {4}, {6}, {1}};
  const std::string model = slice_model(c);
  auto s = make_session(environment({"cpu_onednn", "reference"}, FallbackPolicy::kAllow), model);
  auto reference = make_session(reference_env(), model);
  ASSERT_TRUE(s && reference);
  for (int64_t width : {8, 3}) {
    const std::map<std::string, Tensor> in = {{"x", random_tensor({1, width}, 53)}};
    auto got = s->run(in);
    auto want = reference->run(in);
    ASSERT_TRUE(got.has_value()) << "width " << width << ": " << got.status().message();
    ASSERT_TRUE(want.has_value()) << want.status().message();
    expect_close((*want)[0], (*got)[0], {}, "width " + std::to_string(width));
  }
}

std::string split_model(int opset, const std::vector<int64_t>& x, int64_t axis, const std::vector<int64_t>& split,
                        size_t outputs) {
  testing::ModelBuilder m(opset);
  m.input("x", kFloat, x);
  m.node("Relu", {"x"}, {"r"});
  std::vector<std::string> in = {"r"}, out;
  for (size_t k = 0; k < outputs; ++k) out.push_back("p" + std::to_string(k));
  if (opset >= 13 && !split.empty()) {
    int64_initializer(m, "split", split);
    in.push_back("split");
  }
  auto& n = m.node("Split", in, out);
  testing::add_int_attr(n, "axis", axis);
  if (opset < 13 && !split.empty()) add_ints_attr(n, "split", split);
  if (opset >= 18 && split.empty()) testing::add_int_attr(n, "num_outputs", static_cast<int64_t>(outputs));
  for (size_t k = 0; k < outputs; ++k) {
    m.node("Sigmoid", {out[k]}, {"y" + std::to_string(k)});
    m.output("y" + std::to_string(k), kFloat, {});
  }
  return m.bytes();
}

TEST(OnednnSplit, MatchesTheReference) {
  struct Case {
    std::string what;
    int opset;
    std::vector<int64_t> x;
    int64_t axis;
    std::vector<int64_t> split;
    size_t outputs;
  };
  const std::vector<Case> cases = {
      {"YOLO's channel halves", 13, {1, 16, 5, 5}, 1, {}, 2},
      {"explicit sizes as an input", 13, {1, 10, 4}, 1, {3, 7}, 2},
      {"split attribute, last axis", 11, {2, 3, 9}, -1, {2, 3, 4}, 3},
      {"num_outputs 3 of 8", 18, {2, 8}, 1, {}, 3},
  };
  for (const Case& c : cases) {
    ProfiledParts parts;
    expect_matches_reference(split_model(c.opset, c.x, c.axis, c.split, c.outputs),
                             {{"x", random_tensor(c.x, 61, -1.f, 1.f)}}, {}, c.what, onednn_env(), &parts);
    EXPECT_EQ(parts.count("reorder"), c.outputs) << c.what;
  }
}

TEST(OnednnGather, ConstantIndicesMatchTheReference) {
  struct Case {
    std::string what;
    std::vector<int64_t> x;
    int64_t axis;
    std::vector<int64_t> indices;
    bool scalar;
  };
  const std::vector<Case> cases = {
      {"a transformer's x[:, 0]", {2, 5, 8}, 1, {0}, true},
      {"rows by a list, negative first", {6, 4}, 0, {-1, 0, 2}, false},
      {"last axis, repeated", {2, 3, 7}, -1, {6, 6, 1}, false},
      {"a scalar on the last axis", {3, 4}, 1, {-2}, true},
  };
  for (const Case& c : cases) {
    testing::ModelBuilder m(13);
    m.input("x", kFloat, c.x);
    m.node("Relu", {"x"}, {"r"});
    m.int64_initializer("i", c.scalar ? std::vector<int64_t>{} : std::vector<int64_t>{static_cast<int64_t>(c.indices.size())},
                        c.indices);
    testing::add_int_attr(m.node("Gather", {"r", "i"}, {"g"}), "axis", c.axis);
    m.node("Sigmoid", {"g"}, {"y"});
    m.output("y", kFloat, {});
    ProfiledParts parts;
    expect_matches_reference(m.bytes(), {{"x", random_tensor(c.x, 81, -1.f, 1.f)}}, {}, c.what, onednn_env(), &parts);
    EXPECT_EQ(parts.count("reorder"), c.indices.size()) << c.what << ": a window per index";
  }
}

}  // namespace
}  // namespace loom::ep_testing
