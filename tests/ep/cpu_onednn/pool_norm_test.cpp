// Pooling, BatchNormalization, LayerNormalization and Softmax on cpu_onednn
// vs the reference EP.
#include "ep_compare.h"

namespace loom::ep_testing {
namespace {

struct PoolCase {
  std::string op;
  std::vector<int64_t> x, kernel, strides, pads, dilations;
  int64_t ceil_mode, count_include_pad;
  std::string auto_pad;
};

TEST(OnednnPool, MatchesReferenceAcrossAttributes) {
  const std::vector<PoolCase> cases = {
      {"MaxPool", {1, 3, 8, 8}, {2, 2}, {2, 2}, {}, {}, 0, 0, ""},
      {"MaxPool", {2, 4, 9, 9}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {}, 0, 0, ""},
      {"MaxPool", {1, 2, 9, 10}, {3, 3}, {2, 2}, {0, 0, 1, 1}, {}, 1, 0, ""},
      {"MaxPool", {1, 2, 10, 10}, {2, 2}, {1, 1}, {}, {2, 2}, 0, 0, ""},
      {"MaxPool", {1, 2, 7, 9}, {3, 3}, {2, 2}, {}, {}, 0, 0, "SAME_UPPER"},
      {"AveragePool", {1, 3, 8, 8}, {2, 2}, {2, 2}, {}, {}, 0, 0, ""},
      {"AveragePool", {1, 3, 7, 7}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {}, 0, 0, ""},
      {"AveragePool", {1, 3, 7, 7}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {}, 0, 1, ""},
      {"AveragePool", {1, 3, 8, 8}, {3, 3}, {2, 2}, {}, {}, 1, 0, ""},
      {"AveragePool", {1, 2, 6, 7}, {3, 3}, {2, 2}, {}, {}, 0, 0, "SAME_LOWER"},
      // VALID rounds up under ceil_mode too (loom/sdk/window.h).
      {"MaxPool", {1, 2, 9, 10}, {2, 2}, {2, 2}, {}, {}, 1, 0, "VALID"},
      {"AveragePool", {1, 3, 8, 9}, {3, 3}, {2, 2}, {}, {}, 1, 0, "VALID"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const PoolCase& c = cases[i];
    testing::ModelBuilder m;
    m.input("x", kFloat, c.x);
    auto& n = m.node(c.op, {"x"}, {"y"});
    add_ints_attr(n, "kernel_shape", c.kernel);
    if (!c.strides.empty()) add_ints_attr(n, "strides", c.strides);
    if (!c.pads.empty()) add_ints_attr(n, "pads", c.pads);
    if (!c.dilations.empty()) add_ints_attr(n, "dilations", c.dilations);
    if (c.ceil_mode) testing::add_int_attr(n, "ceil_mode", 1);
    if (c.count_include_pad) testing::add_int_attr(n, "count_include_pad", 1);
    if (!c.auto_pad.empty()) add_string_attr(n, "auto_pad", c.auto_pad);
    m.output("y", kFloat, {});
    expect_matches_reference(m.bytes(), {{"x", random_tensor(c.x, 70 + i)}}, {}, c.op + " case " + std::to_string(i));
  }
}

TEST(OnednnPool, GlobalPools) {
  for (const std::string& op : {"GlobalAveragePool", "GlobalMaxPool"})
    for (const std::vector<int64_t>& x : {std::vector<int64_t>{1, 8, 7, 7}, std::vector<int64_t>{2, 3, 5, 1}}) {
      testing::ModelBuilder m;
      m.input("x", kFloat, x);
      m.node(op, {"x"}, {"y"});
      m.output("y", kFloat, {});
      expect_matches_reference(m.bytes(), {{"x", random_tensor(x, 5)}}, {}, op);
    }
}

TEST(OnednnBatchNorm, StandaloneInference) {
  for (const std::vector<int64_t>& x :
       {std::vector<int64_t>{2, 4, 5, 5}, std::vector<int64_t>{3, 6}, std::vector<int64_t>{1, 3, 7}}) {
    testing::ModelBuilder m;
    m.input("x", kFloat, x);
    const int64_t c = x[1];
    random_weights(m, "scale", {c}, 1);
    random_weights(m, "bias", {c}, 2);
    random_weights(m, "mean", {c}, 3);
    m.float_initializer("var", {c}, random_values(static_cast<size_t>(c), 4, 0.5f, 2.f));
    add_float_attr(m.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"y"}), "epsilon", 1e-3f);
    m.output("y", kFloat, {});
    expect_matches_reference(m.bytes(), {{"x", random_tensor(x, 6)}}, {}, "rank " + std::to_string(x.size()));
  }
}

TEST(OnednnLayerNorm, AxesAndOptionalBias) {
  struct Case {
    std::vector<int64_t> x;
    int64_t axis;
    bool bias;
  };
  for (const Case& c : {Case{{2, 5, 16}, -1, true}, Case{{2, 5, 16}, -2, true}, Case{{4, 32}, 1, false},
                        Case{{2, 3, 4, 5}, 1, true}}) {
    testing::ModelBuilder m;
    m.input("x", kFloat, c.x);
    const int64_t axis = c.axis < 0 ? c.axis + static_cast<int64_t>(c.x.size()) : c.axis;
    const std::vector<int64_t> norm(c.x.begin() + axis, c.x.end());
    random_weights(m, "scale", norm, 1);
    if (c.bias) random_weights(m, "bias", norm, 2);
    auto& n = c.bias ? m.node("LayerNormalization", {"x", "scale", "bias"}, {"y"})
                     : m.node("LayerNormalization", {"x", "scale"}, {"y"});
    testing::add_int_attr(n, "axis", c.axis);
    m.output("y", kFloat, {});
    expect_matches_reference(m.bytes(), {{"x", random_tensor(c.x, 7, -3.f, 3.f)}}, {}, "axis " + std::to_string(c.axis));
  }
}

TEST(OnednnSoftmax, Opset13NormalisesOneAxis) {
  for (int64_t axis : {-1, 0, 1, 2}) {
    testing::ModelBuilder m(13);
    m.input("x", kFloat, {3, 4, 5});
    testing::add_int_attr(m.node("Softmax", {"x"}, {"y"}), "axis", axis);
    m.output("y", kFloat, {});
    expect_matches_reference(m.bytes(), {{"x", random_tensor({3, 4, 5}, 8, -5.f, 5.f)}}, {}, "axis " + std::to_string(axis));
  }
}

TEST(OnednnSoftmax, BeforeOpset13NormalisesTheFlattenedTail) {
  // Opsets 1-12 flatten to 2-D at axis: axis 1 of [2, 3, 6] normalises
  // over 18 values per batch row, not over the 3 of axis 1.
  for (int opset : {9, 11}) {
    for (int64_t axis : {0, 1, 2, -1, -2}) {
      testing::ModelBuilder m(opset);
      m.input("x", kFloat, {2, 3, 6});
      testing::add_int_attr(m.node("Softmax", {"x"}, {"y"}), "axis", axis);
      m.output("y", kFloat, {});
      expect_matches_reference(m.bytes(), {{"x", random_tensor({2, 3, 6}, 9, -4.f, 4.f)}}, {},
                               "opset " + std::to_string(opset) + " axis " + std::to_string(axis));
    }
  }
}

}  // namespace
}  // namespace loom::ep_testing
