// Resize (opsets 11 to 19) and Upsample (opset 9) on cpu_onednn vs the
// reference EP: the combinations oneDNN's resampling matches exactly are
// claimed and agree; the others are declined with a reason and still run
// (on the reference EP) when fallback is allowed.
#include "ep_compare.h"

namespace loom::ep_testing {
namespace {

struct ResizeCase {
  int64_t opset;
  std::string mode, ctm, nearest;     // "" leaves the attribute at its default
  std::vector<int64_t> x;             // -1: a symbolic dim
  std::vector<float> scales;          // empty: sizes are given instead
  std::vector<int64_t> sizes;
  bool antialias = false;  // Resize-18's attribute
};

// One Resize node, scales or sizes as initializers (roi omitted or empty).
std::string resize_model(const ResizeCase& c) {
  testing::ModelBuilder m(c.opset);
  m.input("x", kFloat, c.x);
  m.float_initializer("roi", {0}, {});
  if (!c.scales.empty()) m.float_initializer("scales", {4}, c.scales);
  else int64_initializer(m, "sizes", c.sizes);
  const std::string scales = c.scales.empty() ? (c.opset >= 13 ? "" : "empty") : "scales";
  if (scales == "empty") m.float_initializer("empty", {0}, {});
  auto& n = c.scales.empty() ? m.node("Resize", {"x", c.opset >= 13 ? "" : "roi", scales, "sizes"}, {"y"})
                             : m.node("Resize", {"x", c.opset >= 13 ? "" : "roi", "scales"}, {"y"});
  if (!c.mode.empty()) add_string_attr(n, "mode", c.mode);
  if (!c.ctm.empty()) add_string_attr(n, "coordinate_transformation_mode", c.ctm);
  if (!c.nearest.empty()) add_string_attr(n, "nearest_mode", c.nearest);
  if (c.antialias) testing::add_int_attr(n, "antialias", 1);
  m.output("y", kFloat, {});
  return m.bytes();
}

std::vector<int64_t> concrete(std::vector<int64_t> x) {
  for (int64_t& d : x)
    if (d < 0) d = 5;
  return x;
}

TEST(OnednnResize, ClaimedCombinationsMatchReference) {
  const std::vector<ResizeCase> cases = {
      // PP-OCR det: nearest / asymmetric / floor, whole factors.
      {11, "nearest", "asymmetric", "floor", {1, 3, 5, 7}, {1, 1, 2, 2}, {}},
      {11, "nearest", "asymmetric", "floor", {2, 4, 6, 5}, {1, 1, 4, 4}, {}},
      {13, "nearest", "asymmetric", "floor", {1, 2, 3, 4}, {1, 1, 3, 2}, {}},
      {13, "nearest", "asymmetric", "floor", {1, 2, -1, -1}, {1, 1, 2, 2}, {}},
      {13, "nearest", "asymmetric", "floor", {1, 2, 3, 4}, {}, {1, 2, 9, 8}},
      // linear / half_pixel: whole, non-integer and downscaling factors.
      {11, "linear", "", "", {1, 3, 5, 7}, {1, 1, 2, 2}, {}},
      {13, "linear", "half_pixel", "", {2, 4, 6, 5}, {1, 1, 4, 4}, {}},
      {13, "linear", "half_pixel", "", {1, 2, 4, 6}, {1, 1, 1.5f, 2.5f}, {}},
      {13, "linear", "half_pixel", "", {1, 2, 8, 6}, {1, 1, 0.5f, 0.5f}, {}},
      {13, "linear", "half_pixel", "", {1, 2, -1, -1}, {1, 1, 2, 3}, {}},
      {13, "linear", "half_pixel", "", {1, 3, 5, 7}, {}, {1, 3, 8, 3}},
      {11, "linear", "pytorch_half_pixel", "", {1, 3, 5, 7}, {1, 1, 2, 4}, {}},
      {13, "linear", "pytorch_half_pixel", "", {1, 3, 5, 7}, {}, {1, 3, 12, 4}},
      // Models of opsets 14 to 17 use Resize-13; 18 and 19 add attributes
      // that change nothing at their defaults.
      {17, "nearest", "asymmetric", "floor", {1, 2, 3, 4}, {1, 1, 2, 2}, {}},
      {17, "linear", "half_pixel", "", {1, 2, 4, 6}, {1, 1, 2, 2}, {}},
      {18, "linear", "half_pixel", "", {1, 2, 4, 6}, {1, 1, 2, 2}, {}},
      {19, "nearest", "asymmetric", "floor", {1, 3, 5, 7}, {}, {1, 3, 10, 14}},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const ResizeCase& c = cases[i];
    const std::vector<int64_t> x = concrete(c.x);
    expect_matches_reference(resize_model(c), {{"x", random_tensor(x, 90 + i)}}, {},
                             "Resize " + c.mode + "/" + c.ctm + " case " + std::to_string(i));
  }
}

TEST(OnednnResize, UpsampleNearestMatchesReference) {
  for (const std::vector<float>& scales : {std::vector<float>{1, 1, 2, 2}, std::vector<float>{1, 1, 4, 3}}) {
    testing::ModelBuilder m(9);
    m.input("x", kFloat, {1, 3, 5, 6});
    m.float_initializer("scales", {4}, scales);
    m.node("Upsample", {"x", "scales"}, {"y"});
    m.output("y", kFloat, {});
    expect_matches_reference(m.bytes(), {{"x", random_tensor({1, 3, 5, 6}, 3)}}, {}, "Upsample");
  }
}

// Inside a conv partition (blocked layouts around it) Resize joins the
// partition: one oneDNN partition, no reference nodes.
TEST(OnednnResize, StaysInsideTheConvPartition) {
  for (const std::string mode : {"nearest", "linear"}) {
    testing::ModelBuilder m(13);
    m.input("x", kFloat, {1, 16, 8, 8});
    random_weights(m, "w1", {16, 16, 3, 3}, 1, 144);
    random_weights(m, "w2", {16, 16, 3, 3}, 2, 144);
    m.float_initializer("scales", {4}, {1, 1, 2, 2});
    add_ints_attr(m.node("Conv", {"x", "w1"}, {"c1"}), "pads", {1, 1, 1, 1});
    auto& r = m.node("Resize", {"c1", "", "scales"}, {"up"});
    add_string_attr(r, "mode", mode);
    add_string_attr(r, "coordinate_transformation_mode", mode == "nearest" ? "asymmetric" : "half_pixel");
    if (mode == "nearest") add_string_attr(r, "nearest_mode", "floor");
    add_ints_attr(m.node("Conv", {"up", "w2"}, {"y"}), "pads", {1, 1, 1, 1});
    m.output("y", kFloat, {});
    auto s = make_session(onednn_env(), m.bytes());
    ASSERT_TRUE(s) << mode;
    EXPECT_EQ(s->placement().providers.size(), 1u) << mode;
    expect_matches_reference(m.bytes(), {{"x", random_tensor({1, 16, 8, 8}, 4)}}, {}, mode);
  }
}

TEST(OnednnResize, DeclinesWhereOneDnnRoundsDifferently) {
  struct Declined {
    ResizeCase c;
    std::string reason;  // part of the decline reason
  };
  const std::vector<Declined> cases = {
      {{13, "nearest", "asymmetric", "floor", {1, 2, 4, 6}, {1, 1, 1.5f, 1.5f}, {}}, "non-integer scale"},
      {{13, "nearest", "asymmetric", "floor", {1, 2, 8, 8}, {1, 1, 0.5f, 0.5f}, {}}, "non-integer scale"},
      {{13, "nearest", "", "", {1, 2, 4, 6}, {1, 1, 2, 2}, {}}, "half away from zero"},
      {{13, "nearest", "half_pixel", "round_prefer_ceil", {1, 2, 4, 6}, {1, 1, 2, 2}, {}}, "half away from zero"},
      {{13, "linear", "asymmetric", "", {1, 2, 4, 6}, {1, 1, 2, 2}, {}}, "half-pixel centres"},
      {{13, "linear", "align_corners", "", {1, 2, 4, 6}, {1, 1, 2, 2}, {}}, "half-pixel centres"},
      {{13, "cubic", "", "", {1, 2, 4, 6}, {1, 1, 2, 2}, {}}, "no oneDNN resampling"},
      {{13, "linear", "half_pixel", "", {1, 2, 5, 5}, {1, 1, 1.5f, 1.5f}, {}}, "not whole"},
      {{13, "linear", "half_pixel", "", {1, 2, 5, 5}, {1, 2, 2, 2}, {}}, "N and C"},
      {{13, "linear", "pytorch_half_pixel", "", {1, 2, 5, 5}, {}, {1, 2, 1, 4}}, "output size of 1"},
      {{18, "linear", "half_pixel", "", {1, 2, 4, 6}, {1, 1, 0.5f, 0.5f}, {}, true}, "antialias"},
      {{19, "linear", "half_pixel_symmetric", "", {1, 2, 4, 6}, {1, 1, 2, 2}, {}}, "half-pixel centres"},
  };
  auto fallback_env = environment({"cpu_onednn", "reference"}, FallbackPolicy::kAllow);
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string model = resize_model(cases[i].c);
    auto s = make_session(fallback_env, model);
    ASSERT_TRUE(s) << i;
    for (const auto& n : s->placement().nodes) {
      EXPECT_EQ(n.provider, "reference") << "case " << i;
      EXPECT_NE(n.reason.find(cases[i].reason), std::string::npos) << "case " << i << ": " << n.reason;
    }
    const std::vector<int64_t> x = concrete(cases[i].c.x);
    EXPECT_TRUE(s->run({{"x", random_tensor(x, 7)}}).has_value()) << "case " << i;
  }
}

TEST(OnednnResize, ScalesGivenAsAnInputRunWithEachRunsValues) {
  testing::ModelBuilder m(13);
  m.input("x", kFloat, {1, 2, 4, 4});
  m.input("scales", kFloat, {4});
  auto& n = m.node("Resize", {"x", "", "scales"}, {"y"});
  add_string_attr(n, "mode", "linear");
  m.output("y", kFloat, {});
  auto s = make_session(environment({"cpu_onednn", "reference"}, FallbackPolicy::kAllow), m.bytes());
  auto reference = make_session(reference_env(), m.bytes());
  ASSERT_TRUE(s && reference);
  for (const auto& p : s->placement().nodes) EXPECT_EQ(p.provider, "cpu_onednn") << p.reason;
  // 2x: oneDNN; 1.5 x 4 = 6 whole: oneDNN; 1.3 x 4 not whole: the fallback.
  for (const std::vector<float>& scales : {std::vector<float>{1, 1, 2, 2}, {1, 1, 1.5f, 1.5f}, {1, 1, 1.3f, 1.3f}}) {
    const std::map<std::string, Tensor> in = {{"x", random_tensor({1, 2, 4, 4}, 9)},
                                              {"scales", testing::float_tensor({4}, scales)}};
    auto got = s->run(in);
    auto want = reference->run(in);
    ASSERT_TRUE(got.has_value()) << got.status().message();
    ASSERT_TRUE(want.has_value()) << want.status().message();
    expect_close((*want)[0], (*got)[0], {}, "scale " + std::to_string(scales[2]));
  }
}

// y = Resize(Relu(x)) to sizes [N, C, H * num / den, W * num / den] computed
// from x's shape when the model runs (PyTorch's F.interpolate(size=...) on
// a dynamic input exports Shape -> Slice -> Mul -> Concat): the int64 shape
// nodes go to the reference EP, the Relu and the Resize to cpu_onednn.
std::string runtime_sizes_model(const std::string& mode, int64_t num, int64_t den) {
  testing::ModelBuilder m(13);
  m.input("x", kFloat, {1, 3, -1, -1});
  int64_initializer(m, "start", {2});
  int64_initializer(m, "end", {4});
  int64_initializer(m, "num", {num});
  int64_initializer(m, "den", {den});
  int64_initializer(m, "nc", {1, 3});
  m.node("Relu", {"x"}, {"r"});
  m.node("Shape", {"x"}, {"shape"});
  m.node("Slice", {"shape", "start", "end"}, {"hw"});
  m.node("Mul", {"hw", "num"}, {"scaled"});
  m.node("Div", {"scaled", "den"}, {"out_hw"});
  testing::add_int_attr(m.node("Concat", {"nc", "out_hw"}, {"sizes"}), "axis", 0);
  auto& n = m.node("Resize", {"r", "", "", "sizes"}, {"y"});
  add_string_attr(n, "mode", mode);
  if (mode == "nearest") {
    add_string_attr(n, "coordinate_transformation_mode", "asymmetric");
    add_string_attr(n, "nearest_mode", "floor");
  }
  m.output("y", kFloat, {});
  return m.bytes();
}

// Runs `model` on cpu_onednn (the reference EP taking what it leaves) and on
// the reference EP alone for each input shape; returns what cpu_onednn said
// it ran.
ProfiledParts expect_runs_match(const std::string& model, const std::vector<std::vector<int64_t>>& shapes,
                                const std::string& what) {
  auto s = make_session(environment({"cpu_onednn", "reference"}, FallbackPolicy::kAllow), model, profiled_options());
  auto reference = make_session(reference_env(), model);
  if (!s || !reference) {
    ADD_FAILURE() << what;
    return {};
  }
  for (const auto& n : s->placement().nodes)
    if (n.op_type == "Resize") EXPECT_EQ(n.provider, "cpu_onednn") << what << ": " << n.reason;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const std::map<std::string, Tensor> in = {{"x", random_tensor(shapes[i], static_cast<uint32_t>(40 + i))}};
    auto got = s->run(in);
    auto want = reference->run(in);
    EXPECT_TRUE(got.has_value()) << what << ": " << got.status().message();
    EXPECT_TRUE(want.has_value()) << what << ": " << want.status().message();
    if (got.has_value() && want.has_value()) expect_close((*want)[0], (*got)[0], {}, what + " run " + std::to_string(i));
  }
  return parts_of(*s);
}

TEST(OnednnResize, SizesComputedAtRunTimeRunOnOneDnn) {
  // A program per input shape (and so per sizes), reused when a shape comes back.
  const ProfiledParts linear =
      expect_runs_match(runtime_sizes_model("linear", 3, 2), {{1, 3, 4, 6}, {1, 3, 5, 3}, {1, 3, 4, 6}}, "linear x1.5");
  EXPECT_EQ(linear.count("resampling"), 3u);
  EXPECT_EQ(linear.count("build program"), 2u);
  const ProfiledParts nearest =
      expect_runs_match(runtime_sizes_model("nearest", 2, 1), {{1, 3, 4, 6}, {1, 3, 3, 5}}, "nearest x2");
  EXPECT_EQ(nearest.count("resampling"), 2u);
}

TEST(OnednnResize, RunTimeSizesOneDnnDoesNotMatchRunOnTheFallback) {
  // Nearest by 1.5: oneDNN rounds differently, which only the sizes' values
  // show. Those runs go to the reference EP, the second with a shape met
  // before without trying to build again.
  const ProfiledParts parts = expect_runs_match(runtime_sizes_model("nearest", 3, 2),
                                                {{1, 3, 4, 6}, {1, 3, 4, 6}, {1, 3, 2, 2}}, "nearest x1.5");
  EXPECT_EQ(parts.count("build program"), 2u) << "one declined build per shape";
  EXPECT_EQ(parts.count("resampling"), 0u);
}

}  // namespace
}  // namespace loom::ep_testing
