// Reference EP com.microsoft FusedConv and FusedGemm (ONNX Runtime semantics):
// Conv / Gemm, then (FusedConv) + Z, then the activation, checked against a
// direct computation for every activation; bad activations fail clearly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/model_builder.h"
#include "common/test_env.h"

namespace loom {
namespace {

using testing::float_tensor;
using testing::values_of;
using ::onnx::AttributeProto;
using ::onnx::TensorProto;

Expected<std::vector<Tensor>> run(const testing::ModelBuilder& m, const std::map<std::string, Tensor>& feeds) {
  auto s = Session::create_from_bytes(testing::reference_env(), m.bytes());
  if (!s.has_value()) return s.status();
  return (*s)->run(feeds);
}

std::vector<float> ramp(size_t n, float scale, float shift) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>(i) + shift;
  return v;
}

// X [1, 2, 3, 3], W [2, 2, 2, 2], B [2], optional Z [1, 2, 2, 2]; no padding, stride 1.
std::vector<float> conv_expected(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& b) {
  std::vector<float> y(8);
  for (int m = 0; m < 2; ++m)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) {
        double acc = b[m];
        for (int c = 0; c < 2; ++c)
          for (int ki = 0; ki < 2; ++ki)
            for (int kj = 0; kj < 2; ++kj) acc += x[(c * 3 + i + ki) * 3 + j + kj] * w[((m * 2 + c) * 2 + ki) * 2 + kj];
        y[(m * 2 + i) * 2 + j] = static_cast<float>(acc);
      }
  return y;
}

struct ActCase {
  std::string name;
  std::vector<float> params;
  std::function<double(double)> f;
};

std::vector<ActCase> conv_activations() {
  return {{"Relu", {}, [](double v) { return std::max(v, 0.0); }},
          {"Tanh", {}, [](double v) { return std::tanh(v); }},
          {"Sigmoid", {}, [](double v) { return 1 / (1 + std::exp(-v)); }},
          {"LeakyRelu", {0.1f}, [](double v) { return v >= 0 ? v : 0.1 * v; }},
          {"Clip", {-1.5f, 2.f}, [](double v) { return std::min(std::max(v, -1.5), 2.0); }},
          {"HardSigmoid", {0.25f, 0.4f}, [](double v) { return std::clamp(0.25 * v + 0.4, 0.0, 1.0); }}};
}

TEST(ReferenceContribFused, FusedConvEveryActivationWithAndWithoutZ) {
  const std::vector<float> x = ramp(18, 0.1f, -0.9f), w = ramp(16, -0.07f, 0.5f), b = {0.2f, -0.3f};
  const std::vector<float> z = ramp(8, 0.3f, -1.2f);
  const std::vector<float> conv = conv_expected(x, w, b);
  for (const ActCase& act : conv_activations()) {
    for (bool with_z : {false, true}) {
      testing::ModelBuilder m(17);
      m.import_domain("com.microsoft", 1);
      m.input("x", TensorProto::FLOAT, {1, 2, 3, 3});
      if (with_z) m.input("z", TensorProto::FLOAT, {1, 2, 2, 2});
      m.float_initializer("w", {2, 2, 2, 2}, w).float_initializer("b", {2}, b);
      m.output("y", TensorProto::FLOAT, {1, 2, 2, 2});
      auto& node = with_z ? m.node("FusedConv", {"x", "w", "b", "z"}, {"y"}, "", "com.microsoft")
                          : m.node("FusedConv", {"x", "w", "b"}, {"y"}, "", "com.microsoft");
      testing::add_ints_attr(node, "kernel_shape", {2, 2});
      testing::add_string_attr(node, "activation", act.name);
      if (!act.params.empty()) testing::add_floats_attr(node, "activation_params", act.params);
      std::map<std::string, Tensor> feeds = {{"x", float_tensor({1, 2, 3, 3}, x)}};
      if (with_z) feeds["z"] = float_tensor({1, 2, 2, 2}, z);
      auto out = run(m, feeds);
      ASSERT_TRUE(out.has_value()) << act.name << ": " << out.status().message();
      const std::vector<float> got = values_of((*out)[0]);
      ASSERT_EQ(got.size(), 8u);
      for (size_t i = 0; i < 8; ++i)
        EXPECT_NEAR(got[i], act.f(conv[i] + (with_z ? z[i] : 0.f)), 1e-5) << act.name << " z " << with_z << " at " << i;
    }
  }
}

TEST(ReferenceContribFused, FusedConvRejectsBadActivations) {
  auto build = [](const std::string& act, const std::vector<float>& params) {
    testing::ModelBuilder m(17);
    m.import_domain("com.microsoft", 1);
    m.input("x", TensorProto::FLOAT, {1, 1, 2, 2}).float_initializer("w", {1, 1, 1, 1}, {2.f});
    m.output("y", TensorProto::FLOAT, {1, 1, 2, 2});
    auto& node = m.node("FusedConv", {"x", "w"}, {"y"}, "", "com.microsoft");
    testing::add_string_attr(node, "activation", act);
    if (!params.empty()) testing::add_floats_attr(node, "activation_params", params);
    return run(m, {{"x", float_tensor({1, 1, 2, 2}, {1, -2, 3, -4})}});
  };
  auto unknown = build("Softsign", {});
  ASSERT_FALSE(unknown.has_value());
  EXPECT_NE(unknown.status().message().find("unimplemented activation 'Softsign'"), std::string::npos)
      << unknown.status().message();
  auto missing = build("Clip", {0.f});
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.status().message().find("activation_params"), std::string::npos) << missing.status().message();
  ASSERT_FALSE(build("", {}).has_value());  // as in ORT, "" is no activation name
  ASSERT_TRUE(build("Relu", {}).has_value());
  EXPECT_EQ(values_of((*build("Relu", {}))[0]), (std::vector<float>{2, 0, 6, 0}));
}

TEST(ReferenceContribFused, FusedGemmActivationsWithAttributes) {
  // A [2, 3], B^T [4, 3] (transB), C [4] broadcast, alpha 0.5, beta 2.
  const std::vector<float> a = ramp(6, 0.3f, -0.8f), bt = ramp(12, -0.11f, 0.6f), c = {0.1f, -0.2f, 0.3f, -0.4f};
  std::vector<double> gemm(8);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j) {
      double acc = 0;
      for (int k = 0; k < 3; ++k) acc += a[i * 3 + k] * bt[j * 3 + k];
      gemm[i * 4 + j] = 0.5 * acc + 2.0 * c[j];
    }
  struct GemmAct {
    std::string name;
    std::map<std::string, float> attrs;
    std::function<double(double)> f;
  };
  const std::vector<GemmAct> acts = {
      {"Relu", {}, [](double v) { return std::max(v, 0.0); }},
      {"LeakyRelu", {{"activation_alpha", 0.2f}}, [](double v) { return v >= 0 ? v : 0.2 * v; }},
      {"LeakyRelu", {}, [](double v) { return v >= 0 ? v : 0.01 * v; }},
      {"HardSigmoid", {{"activation_alpha", 0.3f}, {"activation_beta", 0.6f}},
       [](double v) { return std::clamp(0.3 * v + 0.6, 0.0, 1.0); }},
      {"Elu", {{"activation_alpha", 0.7f}}, [](double v) { return v >= 0 ? v : 0.7 * (std::exp(v) - 1); }},
      {"Selu", {{"activation_alpha", 1.5f}, {"activation_gamma", 1.1f}},
       [](double v) { return 1.1 * (v > 0 ? v : 1.5 * (std::exp(v) - 1)); }},
      {"Softplus", {}, [](double v) { return std::log1p(std::exp(v)); }},
      {"Softsign", {}, [](double v) { return v / (1 + std::fabs(v)); }},
      {"ThresholdedRelu", {{"activation_alpha", 0.1f}}, [](double v) { return v > 0.1 ? v : 0.0; }},
      {"Sigmoid", {}, [](double v) { return 1 / (1 + std::exp(-v)); }},
      {"Tanh", {}, [](double v) { return std::tanh(v); }}};
  for (const GemmAct& act : acts) {
    testing::ModelBuilder m(17);
    m.import_domain("com.microsoft", 1);
    m.input("a", TensorProto::FLOAT, {2, 3}).float_initializer("b", {4, 3}, bt).float_initializer("c", {4}, c);
    m.output("y", TensorProto::FLOAT, {2, 4});
    auto& node = m.node("FusedGemm", {"a", "b", "c"}, {"y"}, "", "com.microsoft");
    testing::add_int_attr(node, "transB", 1);
    testing::add_float_attr(node, "alpha", 0.5f);
    testing::add_float_attr(node, "beta", 2.f);
    testing::add_string_attr(node, "activation", act.name);
    for (const auto& [k, v] : act.attrs) testing::add_float_attr(node, k, v);
    auto out = run(m, {{"a", float_tensor({2, 3}, a)}});
    ASSERT_TRUE(out.has_value()) << act.name << ": " << out.status().message();
    const std::vector<float> got = values_of((*out)[0]);
    ASSERT_EQ(got.size(), 8u);
    for (size_t i = 0; i < 8; ++i) EXPECT_NEAR(got[i], act.f(gemm[i]), 1e-5) << act.name << " at " << i;
  }
}

TEST(ReferenceContribFused, FusedGemmRejectsUnknownActivation) {
  testing::ModelBuilder m(17);
  m.import_domain("com.microsoft", 1);
  m.input("a", TensorProto::FLOAT, {1, 2}).float_initializer("b", {2, 1}, {1.f, 2.f});
  m.output("y", TensorProto::FLOAT, {1, 1});
  auto& node = m.node("FusedGemm", {"a", "b"}, {"y"}, "", "com.microsoft");
  testing::add_string_attr(node, "activation", "Gelu");
  auto out = run(m, {{"a", float_tensor({1, 2}, {1.f, 1.f})}});
  ASSERT_FALSE(out.has_value());
  EXPECT_NE(out.status().message().find("unimplemented activation 'Gelu'"), std::string::npos) << out.status().message();
}

}  // namespace
}  // namespace loom
