// Quantized residuals fused into the convolution on cpu_onednn
// (QLinearConv -> DQ -> Add(DQ(r)) -> [Relu] -> Q) and the quantized max
// pool, vs the reference EP.
#include <cstdint>
#include <optional>
#include <set>

#include "quantized_compare.h"

namespace loom::ep_testing {
namespace {

// --- Quantized residuals: QLinearConv -> DQ -> Add(DQ(r)) -> [Relu] -> Q ---
//
// The convolution writes the block's output directly (post-ops: clip to
// y's range, sum of r, relu, out's zero point); the reference runs the same
// graph node by node. Tolerance: every element within 1 step of out, up to
// kResidualOffPercent % of them off by one. The fused convolution never
// rounds its own output y: the unfused graph adds DQ(y) = v + e, |e| <=
// y_scale / 2, where the fused one adds v, so the sum before out's rounding
// moves by at most 0.5 * y_scale / out_scale <= 0.5 steps of out (these
// cases keep out_scale >= y_scale, as calibrated sums do: the sum's range
// covers y's), and the rounded results differ by at most one. Measured:
// 1.4-17.2 % of elements off by one across these cases (a uniform e moves
// about y_scale / (4 * out_scale) of them: 17 % here), none by more. y's
// saturation is kept by the clip post-op: without it the "y saturates"
// cases are off by up to 157 steps.
constexpr int kResidualOffPercent = 25;

struct ResidualCase {
  enum Source { kBlockInput, kIntermediate, kOtherConv } r;  // where r comes from
  bool is_signed, relu;
  int32_t x_zero, y_zero, r_zero, out_zero;  // r_zero: r computed here (a block input r has x_zero)
  float y_scale_factor = 1.f;  // < 1: y saturates
  // Readers that must keep the block unfused (y or DQ(y) also a graph
  // output) or r's bytes intact (r also read by a later convolution or a
  // graph output).
  bool y_is_output = false, dq_y_is_output = false, r_read_later = false, r_is_output = false;
};

// x (float, 16x8x8) -> QuantizeLinear -> xq -> ... -> out = Q(relu?(DQ(y) +
// DQ(r))), y = QLinearConv(...). (The leading Q puts every node in one
// oneDNN partition, as in a QDQ model: nodes reading only graph inputs
// would each start a partition of their own.)
std::string residual_model(const ResidualCase& c) {
  testing::ModelBuilder m;
  const auto q = c.is_signed ? kS8 : kU8;
  const std::vector<int64_t> dims = {1, 16, 8, 8};
  m.input("x", kFloat, dims);
  const float x_scale = 0.02f;
  // As qlinear_conv_model: conv outputs spread about +-40 steps of conv_scale.
  const float conv_scale = x_scale * 0.004f * 73.f * 73.f * 12.f / 40.f;
  scalar_float(m, "x_s", x_scale);
  m.int_initializer("x_z", q, {}, {c.x_zero});
  scalar_float(m, "c_s", conv_scale);
  m.int_initializer("r_z", q, {}, {c.r_zero});
  scalar_float(m, "y_s", conv_scale * c.y_scale_factor);
  m.int_initializer("y_z", q, {}, {c.y_zero});
  m.node("QuantizeLinear", {"x", "x_s", "x_z"}, {"xq"});
  for (int k = 0; k < 4; ++k) {
    const std::string w = "w" + std::to_string(k);
    m.int_initializer(w, kS8, {16, 16, 3, 3}, random_ints(16 * 16 * 9, 60 + k, -127, 127));
    m.float_initializer(w + "_s", {16}, random_values(16, 70 + k, 0.002f, 0.006f));
    m.int_initializer(w + "_z", kS8, {16}, std::vector<int32_t>(16, 0));
    m.int_initializer("b" + std::to_string(k), kS32, {16}, random_ints(16, 80 + k, -2000, 2000));
  }
  auto conv = [&](const std::string& in, const std::string& in_s, const std::string& in_z, int k,
                  const std::string& out, const std::string& out_s, const std::string& out_z) {
    const std::string w = "w" + std::to_string(k);
    add_ints_attr(m.node("QLinearConv", {in, in_s, in_z, w, w + "_s", w + "_z", out_s, out_z, "b" + std::to_string(k)},
                         {out}),
                  "pads", {1, 1, 1, 1});
  };
  std::string r, r_s = "c_s", r_z = "r_z";
  switch (c.r) {
    case ResidualCase::kBlockInput:  // r = xq, also the convolution's own input
      r = "xq";
      r_s = "x_s";
      r_z = "x_z";
      conv("xq", "x_s", "x_z", 1, "y", "y_s", "y_z");
      break;
    case ResidualCase::kIntermediate:  // r computed here, read by y's convolution and the DQ
      r = "r";
      conv("xq", "x_s", "x_z", 0, "r", "c_s", "r_z");
      conv("r", "c_s", "r_z", 1, "y", "y_s", "y_z");
      break;
    case ResidualCase::kOtherConv:  // a downsample branch: r and y both convolutions of xq
      r = "r";
      conv("xq", "x_s", "x_z", 0, "r", "c_s", "r_z");
      conv("xq", "x_s", "x_z", 1, "y", "y_s", "y_z");
      break;
  }
  m.node("DequantizeLinear", {"y", "y_s", "y_z"}, {"dy"});
  m.node("DequantizeLinear", {r, r_s, r_z}, {"dr"});
  m.node("Add", {"dy", "dr"}, {"sum"});
  if (c.relu) m.node("Relu", {"sum"}, {"act"});
  // out_scale >= y_scale and r's scale (see kResidualOffPercent).
  scalar_float(m, "o_s", 1.5f * std::max(conv_scale, x_scale));
  m.int_initializer("o_z", q, {}, {c.out_zero});
  m.node("QuantizeLinear", {c.relu ? "act" : "sum", "o_s", "o_z"}, {"out"});
  m.output("out", q, dims);
  if (c.r_read_later) {
    conv(r, r_s, r_z, 2, "late", "y_s", "y_z");
    m.output("late", q, dims);
  }
  if (c.y_is_output) m.output("y", q, dims);
  if (c.dq_y_is_output) m.output("dy", kFloat, dims);
  if (c.r_is_output) m.output(r, q, dims);
  return m.bytes();
}

// Every node on cpu_onednn; `fused` residuals built into a convolution;
// outputs within one step of the reference's (fused outputs within
// kResidualOffPercent, others within the usual 1 %).
void expect_residual_match(const ResidualCase& c, uint64_t fused, const std::string& what) {
  const std::string model = residual_model(c);
  auto onednn = make_session(onednn_env(), model, profiled_options());
  auto reference = make_session(reference_env(), model);
  ASSERT_TRUE(onednn && reference) << what;
  std::set<std::string> partitions;
  for (const auto& n : onednn->placement().nodes) {
    EXPECT_EQ(n.provider, "cpu_onednn") << what << ": " << n.op_type;
    partitions.insert(n.reason);
  }
  EXPECT_EQ(partitions.size(), 1u) << what << ": expected one oneDNN partition";
  // x spans past the quantized range (xq saturates at both ends).
  const std::map<std::string, Tensor> in = {{"x", random_tensor({1, 16, 8, 8}, 400, -3.f, 3.f)}};
  auto got = onednn->run(in);
  EXPECT_EQ(parts_of(*onednn).count("convolution quantized-residual"), fused) << what << ": quantized residuals fused";
  expect_outputs_match(reference->run(in), std::move(got), what,
                       [fused](size_t i) { return i == 0 && fused > 0 ? kResidualOffPercent : 1; });
}

TEST(OnednnQuantizedResidual, FusedIntoTheConvolutionMatchesReference) {
  using R = ResidualCase;
  struct Named {
    R c;
    const char* what;
  };
  const std::vector<Named> cases = {
      // r, signed, relu, x_zero, y_zero, r_zero, out_zero
      {{R::kBlockInput, false, false, 128, 120, 128, 100}, "u8, r = block input (copied: the conv reads it)"},
      {{R::kBlockInput, false, true, 128, 120, 128, 100}, "u8, r = block input, relu"},
      {{R::kIntermediate, false, false, 128, 125, 110, 128}, "u8, r intermediate (in place)"},
      {{R::kIntermediate, false, true, 128, 125, 110, 3}, "u8, r intermediate, relu"},
      {{R::kOtherConv, false, false, 128, 128, 130, 128}, "u8, r from another QLinearConv"},
      {{R::kOtherConv, false, true, 128, 128, 0, 0}, "u8, r from another QLinearConv, relu, zero points 0"},
      {{R::kBlockInput, true, false, -3, 5, 0, -10}, "s8, r = block input"},
      {{R::kIntermediate, true, true, 0, -4, 7, -20}, "s8, r intermediate, relu"},
      {{R::kOtherConv, true, false, 2, 0, -6, 0}, "s8, r from another QLinearConv"},
      {{R::kOtherConv, true, true, 2, 0, -6, -128}, "s8, relu, out zero point at the minimum"},
      {{R::kIntermediate, false, false, 128, 128, 120, 128, 0.25f}, "u8, y saturates"},
      {{R::kOtherConv, true, true, 0, 10, 0, 0, 0.3f}, "s8, y saturates, relu"},
  };
  for (const Named& n : cases) expect_residual_match(n.c, 1, n.what);
}

// r's bytes are accumulated in place only when nothing else reads them
// afterwards: a later reader or a graph output keeps r intact (copied).
TEST(OnednnQuantizedResidual, KeepsTheResidualForOtherReaders) {
  using R = ResidualCase;
  R later{R::kIntermediate, false, true, 128, 125, 110, 100};
  later.r_read_later = true;
  expect_residual_match(later, 1, "r read by a later convolution");
  R output{R::kIntermediate, true, false, 0, -4, 7, -20};
  output.r_is_output = true;
  expect_residual_match(output, 1, "r also a graph output");
  R other{R::kOtherConv, false, false, 128, 128, 130, 128};
  other.r_read_later = true;
  expect_residual_match(other, 1, "r from another QLinearConv, read later");
}

// No fusion where y (or its dequantized value) is needed as it is: the
// chain is built node by node and matches the reference as closely as any
// unfused graph.
TEST(OnednnQuantizedResidual, NotFusedWhenTheIntermediateIsReadElsewhere) {
  using R = ResidualCase;
  R y_out{R::kIntermediate, false, true, 128, 125, 110, 100};
  y_out.y_is_output = true;
  expect_residual_match(y_out, 0, "y also a graph output");
  R dq_out{R::kBlockInput, true, false, -3, 5, 0, -10};
  dq_out.dq_y_is_output = true;
  expect_residual_match(dq_out, 0, "DQ(y) also a graph output");
}

// DQ -> MaxPool -> Q with the same parameters runs as one u8 / s8 MaxPool
// (exact: every element equal); with other parameters node by node.
TEST(OnednnQuantizedMaxPool, MatchesReference) {
  for (bool is_signed : {false, true})
    for (bool same : {true, false}) {
      testing::ModelBuilder m;
      const auto q = is_signed ? kS8 : kU8;
      m.input("x", q, {1, 8, 9, 9});
      scalar_float(m, "s", 0.05f);
      m.int_initializer("z", q, {}, {is_signed ? -7 : 130});
      scalar_float(m, "s_out", same ? 0.05f : 0.065f);
      m.int_initializer("z_out", q, {}, {same ? (is_signed ? -7 : 130) : 12});
      m.node("DequantizeLinear", {"x", "s", "z"}, {"d"});
      auto& pool = m.node("MaxPool", {"d"}, {"p"});
      add_ints_attr(pool, "kernel_shape", {3, 3});
      add_ints_attr(pool, "strides", {2, 2});
      add_ints_attr(pool, "pads", {1, 1, 1, 1});
      m.node("QuantizeLinear", {"p", "s_out", "z_out"}, {"y"});
      m.output("y", q, {1, 8, 5, 5});
      const std::string what = std::string(is_signed ? "s8" : "u8") + (same ? " same parameters" : " requantized");
      expect_quantized_match(m.bytes(), {{"x", int8_tensor({1, 8, 9, 9}, is_signed, 500)}}, what, same ? 0 : 1);
    }
}


}  // namespace
}  // namespace loom::ep_testing
