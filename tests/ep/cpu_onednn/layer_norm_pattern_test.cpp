// LayerNorm written out with primitive ops, as torch / ONNX exporters emit
// it (ReduceMean, Sub, Pow, ReduceMean, Add eps, Sqrt, Div, then optionally
// Mul gamma / Add beta): the core's layer_norm_fusion makes it one
// LayerNormalization where cpu_onednn runs the nodes, which cpu_onednn
// computes as one layer_normalization. Near-misses must not be rewritten:
// they run as written, each ReduceMean a oneDNN reduction.
#include "ep_compare.h"

namespace loom::ep_testing {
namespace {

struct Case {
  std::vector<int64_t> dims;
  float epsilon = 1e-5f;
  bool gamma = false, beta = false;
  bool reciprocal = false;  // d * Reciprocal(Sqrt(...)) instead of d / Sqrt(...)
  int opset = 13;           // 18: axes as a constant input
  int64_t axis = -1;        // ReduceMean axis
  bool share_d = false;     // x - m also read outside the pattern
};

void reduce_mean(testing::ModelBuilder& m, const Case& c, const std::string& in, const std::string& out) {
  if (c.opset >= 18) {
    m.node("ReduceMean", {in, "axes"}, {out});
  } else {
    add_ints_attr(m.node("ReduceMean", {in}, {out}), "axes", {c.axis});
  }
}

std::string model(const Case& c) {
  testing::ModelBuilder m(c.opset);
  const int64_t last = c.dims.back();
  m.input("in", kFloat, c.dims);
  // x computed by a claimed node, so both of its readers join one partition.
  random_weights(m, "shift", {last}, 7);
  m.node("Add", {"in", "shift"}, {"x"});
  if (c.opset >= 18) int64_initializer(m, "axes", {c.axis});
  m.float_initializer("two", {}, {2.f});
  m.float_initializer("eps", {}, {c.epsilon});
  reduce_mean(m, c, "x", "mean");
  m.node("Sub", {"x", "mean"}, {"d"});
  m.node("Pow", {"d", "two"}, {"sq"});
  reduce_mean(m, c, "sq", "var");
  m.node("Add", {"var", "eps"}, {"ve"});
  m.node("Sqrt", {"ve"}, {"sd"});
  if (c.reciprocal) {
    m.node("Reciprocal", {"sd"}, {"inv"});
    m.node("Mul", {"inv", "d"}, {"y"});
  } else {
    m.node("Div", {"d", "sd"}, {"y"});
  }
  std::string out = "y";
  if (c.gamma) {
    m.float_initializer("gamma", {last}, random_values(static_cast<size_t>(last), 11, 0.5f, 1.5f));
    m.node("Mul", {"gamma", out}, {"yg"});
    out = "yg";
  }
  if (c.beta) {
    m.float_initializer("beta", {last}, random_values(static_cast<size_t>(last), 13));
    m.node("Add", {out, "beta"}, {"yb"});
    out = "yb";
  }
  m.output(out, kFloat, {});
  if (c.share_d) {
    m.node("Relu", {"d"}, {"dr"});
    m.output("dr", kFloat, {});
  }
  return m.bytes();
}

TEST(OnednnLayerNormPattern, WrittenOutFormsMatchReference) {
  for (const std::vector<int64_t>& dims : {std::vector<int64_t>{2, 8, 32}, std::vector<int64_t>{6, 48}})
    for (float eps : {1e-5f, 1e-12f})
      for (int affine = 0; affine < 3; ++affine) {
        Case c;
        c.dims = dims;
        c.epsilon = eps;
        c.gamma = affine >= 1;
        c.beta = affine >= 2;
        const std::string what = "rank " + std::to_string(dims.size()) + " eps " + std::to_string(eps) +
                                 (affine == 0 ? " no affine" : affine == 1 ? " gamma" : " gamma+beta");
        ProfiledParts parts;
        expect_matches_reference(model(c), {{"in", random_tensor(dims, 3, -2.f, 2.f)}}, {}, what, onednn_env(),
                                 &parts);
        EXPECT_EQ(parts.count("layer_normalization"), 1u) << what;
      }
}

TEST(OnednnLayerNormPattern, OtherSpellingsMatchReference) {
  const std::vector<int64_t> dims = {3, 4, 24};
  const std::map<std::string, Tensor> in = {{"in", random_tensor(dims, 5, -2.f, 2.f)}};
  Case reciprocal{dims, 1e-6f, true, true, /*reciprocal=*/true};
  expect_matches_reference(model(reciprocal), in, {}, "Mul by Reciprocal(Sqrt)");
  Case axes_input{dims, 1e-5f, true, true, false, /*opset=*/18};
  expect_matches_reference(model(axes_input), in, {}, "opset 18 axes input");
  Case positive_axis{dims, 1e-5f, true, false, false, 13, /*axis=*/2};
  expect_matches_reference(model(positive_axis), in, {}, "axes [rank-1]");
}

TEST(OnednnLayerNormPattern, NearMissesAreNotRewritten) {
  Case not_last{{2, 8, 32}, 1e-5f, true, true, false, 13, /*axis=*/1};
  Case shared{{2, 8, 32}, 1e-5f, true, true};
  shared.share_d = true;
  for (const auto& [c, what] : {std::pair{not_last, "axes not last"}, std::pair{shared, "shared x - m"}}) {
    ProfiledParts parts;
    expect_matches_reference(model(c), {{"in", random_tensor(c.dims, 7, -2.f, 2.f)}}, {}, what, onednn_env(), &parts);
    EXPECT_EQ(parts.count("layer_normalization"), 0u) << what;
    EXPECT_EQ(parts.count("reduction"), 2u) << what << ": both means as they are written";
  }
}

}  // namespace
}  // namespace loom::ep_testing
