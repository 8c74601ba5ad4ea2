// Reference EP signal-processing kernels (DFT, STFT, windows,
// MelWeightMatrix) through the public API: known transforms, round trips,
// closed-form windows and clear errors on bad inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <map>
#include <string>
#include <vector>

#include "common/model_builder.h"
#include "common/test_env.h"

namespace loom {
namespace {

using testing::float_tensor;
using testing::values_of;
constexpr double kPi = 3.14159265358979323846;

Tensor int64_scalar(int64_t v) { return Tensor::from_vector(DType::kInt64, {}, std::vector<int64_t>{v}); }

// One-node model: inputs named in0.. (float of any rank `ranks[i]`, or int64
// scalars when rank is 0), output y of type `out_type`.
struct OneNode {
  testing::ModelBuilder m;
  ::onnx::NodeProto* node = nullptr;
  OneNode(const std::string& op, const std::vector<std::pair<std::string, int>>& inputs, int32_t out_type) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i].first.empty()) continue;
      const int rank = inputs[i].second;
      if (rank == 0)
        m.input(inputs[i].first, ::onnx::TensorProto::INT64, {});
      else
        m.input(inputs[i].first, ::onnx::TensorProto::FLOAT, std::vector<int64_t>(rank, -1));
    }
    node = &m.node(op, {}, {"y"});
    for (const auto& in : inputs) node->add_input(in.first);
    m.output("y", out_type, {});
    m.proto().mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  }
  OneNode& attr(const std::string& name, int64_t v) {
    testing::add_int_attr(*node, name, v);
    return *this;
  }
  Expected<std::vector<Tensor>> run(const std::map<std::string, Tensor>& feeds) {
    auto s = Session::create_from_bytes(testing::reference_env(), m.bytes());
    EXPECT_TRUE(s.has_value()) << s.status().message();
    if (!s.has_value()) return s.status();
    return (*s)->run(feeds);
  }
};

std::vector<std::complex<double>> naive_dft(const std::vector<std::complex<double>>& x, bool inverse) {
  const size_t n = x.size();
  std::vector<std::complex<double>> y(n);
  for (size_t k = 0; k < n; ++k)
    for (size_t j = 0; j < n; ++j)
      y[k] += x[j] * std::polar(1.0, (inverse ? 2 : -2) * kPi * static_cast<double>(j * k % n) / n);
  if (inverse)
    for (auto& v : y) v /= static_cast<double>(n);
  return y;
}

TEST(SignalTest, DftOfImpulseIsFlatAndOfCosineIsTwoSpikes) {
  const int64_t n = 12;  // not a power of two: exercises Bluestein
  std::vector<float> impulse(n, 0.f), cosine(n);
  impulse[0] = 1.f;
  for (int64_t j = 0; j < n; ++j) cosine[j] = static_cast<float>(std::cos(2 * kPi * 3 * j / n));
  std::vector<float> x = impulse;
  x.insert(x.end(), cosine.begin(), cosine.end());
  OneNode g("DFT", {{"x", 3}}, ::onnx::TensorProto::FLOAT);
  auto out = g.run({{"x", float_tensor({2, n, 1}, x)}});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  ASSERT_EQ((*out)[0].dims(), (Dims{2, n, 2}));
  const std::vector<float> y = values_of((*out)[0]);
  for (int64_t k = 0; k < n; ++k) {
    EXPECT_NEAR(y[2 * k], 1.0, 1e-6);
    EXPECT_NEAR(y[2 * k + 1], 0.0, 1e-6);
    const double expected = (k == 3 || k == n - 3) ? n / 2.0 : 0.0;
    EXPECT_NEAR(y[2 * n + 2 * k], expected, 1e-5) << "bin " << k;
    EXPECT_NEAR(y[2 * n + 2 * k + 1], 0.0, 1e-5) << "bin " << k;
  }
}

TEST(SignalTest, DftMatchesNaiveAndInverseRoundTrips) {
  for (int64_t n : {1, 2, 5, 8, 17, 64}) {
    std::vector<float> x(2 * n);
    std::vector<std::complex<double>> xc(n);
    for (int64_t j = 0; j < n; ++j) {
      x[2 * j] = static_cast<float>(std::sin(0.7 * j) + 0.1 * j);
      x[2 * j + 1] = static_cast<float>(std::cos(1.3 * j));
      xc[j] = {x[2 * j], x[2 * j + 1]};
    }
    OneNode fwd("DFT", {{"x", 3}}, ::onnx::TensorProto::FLOAT);
    auto y = fwd.run({{"x", float_tensor({1, n, 2}, x)}});
    ASSERT_TRUE(y.has_value()) << y.status().message();
    const std::vector<float> yv = values_of((*y)[0]);
    const auto expected = naive_dft(xc, false);
    for (int64_t k = 0; k < n; ++k) {
      EXPECT_NEAR(yv[2 * k], expected[k].real(), 1e-4) << "n=" << n << " k=" << k;
      EXPECT_NEAR(yv[2 * k + 1], expected[k].imag(), 1e-4) << "n=" << n << " k=" << k;
    }
    OneNode inv("DFT", {{"x", 3}}, ::onnx::TensorProto::FLOAT);
    inv.attr("inverse", 1);
    auto back = inv.run({{"x", (*y)[0]}});
    ASSERT_TRUE(back.has_value()) << back.status().message();
    const std::vector<float> bv = values_of((*back)[0]);
    ASSERT_EQ(bv.size(), x.size());
    for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(bv[i], x[i], 1e-5) << "n=" << n << " i=" << i;
  }
}

TEST(SignalTest, DftOnesidedWithDftLengthPadsTheSignal) {
  // Real [1, 3, 1] padded to 8 points, onesided: 5 bins.
  OneNode g("DFT", {{"x", 3}, {"len", 0}}, ::onnx::TensorProto::FLOAT);
  g.attr("onesided", 1);
  auto out = g.run({{"x", float_tensor({1, 3, 1}, {1, 2, 3})}, {"len", int64_scalar(8)}});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  ASSERT_EQ((*out)[0].dims(), (Dims{1, 5, 2}));
  const auto expected = naive_dft({1, 2, 3, 0, 0, 0, 0, 0}, false);
  const std::vector<float> y = values_of((*out)[0]);
  for (int k = 0; k < 5; ++k) {
    EXPECT_NEAR(y[2 * k], expected[k].real(), 1e-5);
    EXPECT_NEAR(y[2 * k + 1], expected[k].imag(), 1e-5);
  }
}

TEST(SignalTest, StftFramesMatchPerFrameDft) {
  std::vector<float> x(10);
  for (int j = 0; j < 10; ++j) x[j] = static_cast<float>(j * j % 7);
  OneNode g("STFT", {{"x", 3}, {"step", 0}, {"", 0}, {"len", 0}}, ::onnx::TensorProto::FLOAT);
  auto out = g.run({{"x", float_tensor({1, 10, 1}, x)}, {"step", int64_scalar(3)}, {"len", int64_scalar(4)}});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  ASSERT_EQ((*out)[0].dims(), (Dims{1, 3, 3, 2}));  // frames 1 + (10-4)/3, bins 4/2+1
  const std::vector<float> y = values_of((*out)[0]);
  for (int f = 0; f < 3; ++f) {
    const auto e = naive_dft({x[3 * f], x[3 * f + 1], x[3 * f + 2], x[3 * f + 3]}, false);
    for (int k = 0; k < 3; ++k) {
      EXPECT_NEAR(y[(f * 3 + k) * 2], e[k].real(), 1e-5);
      EXPECT_NEAR(y[(f * 3 + k) * 2 + 1], e[k].imag(), 1e-5);
    }
  }
}

TEST(SignalTest, WindowsMatchClosedForms) {
  struct Case {
    const char* op;
    double a0, a1, a2;
  };
  for (const Case& c : {Case{"HannWindow", 0.5, 0.5, 0}, Case{"HammingWindow", 25.0 / 46, 21.0 / 46, 0},
                        Case{"BlackmanWindow", 0.42, 0.5, 0.08}}) {
    for (int periodic : {0, 1}) {
      OneNode g(c.op, {{"size", 0}}, ::onnx::TensorProto::DOUBLE);
      g.attr("periodic", periodic).attr("output_datatype", ::onnx::TensorProto::DOUBLE);
      auto out = g.run({{"size", int64_scalar(9)}});
      ASSERT_TRUE(out.has_value()) << c.op << ": " << out.status().message();
      ASSERT_EQ((*out)[0].dtype(), DType::kDouble);
      ASSERT_EQ((*out)[0].dims(), (Dims{9}));
      const double* w = (*out)[0].data_as<double>();
      const double n = periodic ? 9 : 8;
      for (int k = 0; k < 9; ++k)
        EXPECT_NEAR(w[k], c.a0 - c.a1 * std::cos(2 * kPi * k / n) + c.a2 * std::cos(4 * kPi * k / n), 1e-12)
            << c.op << " periodic=" << periodic << " k=" << k;
      if (!periodic) EXPECT_NEAR(w[0], w[8], 1e-12) << c.op;  // symmetric
    }
  }
}

TEST(SignalTest, MelWeightMatrixHasUnitPeakTriangles) {
  testing::ModelBuilder m;
  for (const char* name : {"bins", "dft", "rate"}) m.input(name, ::onnx::TensorProto::INT64, {});
  m.float_initializer("lo", {}, {0.f});
  m.float_initializer("hi", {}, {4000.f});
  m.node("MelWeightMatrix", {"bins", "dft", "rate", "lo", "hi"}, {"y"});
  m.output("y", ::onnx::TensorProto::FLOAT, {-1, -1});
  auto s = Session::create_from_bytes(testing::reference_env(), m.bytes());
  ASSERT_TRUE(s.has_value()) << s.status().message();
  auto out = (*s)->run({{"bins", int64_scalar(4)}, {"dft", int64_scalar(64)}, {"rate", int64_scalar(8000)}});
  ASSERT_TRUE(out.has_value()) << out.status().message();
  ASSERT_EQ((*out)[0].dims(), (Dims{33, 4}));
  const std::vector<float> w = values_of((*out)[0]);
  for (int col = 0; col < 4; ++col) {
    float peak = 0;
    for (int row = 0; row < 33; ++row) {
      EXPECT_GE(w[row * 4 + col], 0.f);
      peak = std::max(peak, w[row * 4 + col]);
    }
    EXPECT_FLOAT_EQ(peak, 1.f) << "filter " << col;
  }
}

void expect_error(Expected<std::vector<Tensor>> out, const std::string& text) {
  ASSERT_FALSE(out.has_value()) << "expected an error containing '" << text << "'";
  EXPECT_NE(out.status().message().find(text), std::string::npos) << out.status().message();
}

TEST(SignalTest, BadInputsGiveClearErrors) {
  {
    OneNode g("HannWindow", {{"size", 0}}, ::onnx::TensorProto::FLOAT);
    expect_error(g.run({{"size", int64_scalar(-3)}}), "HannWindow: size must be non-negative, got -3");
  }
  {
    OneNode g("DFT", {{"x", 3}}, ::onnx::TensorProto::FLOAT);
    expect_error(g.run({{"x", float_tensor({1, 4, 3}, std::vector<float>(12))}}),
                 "DFT: last dimension of 'input' must be 1 (real) or 2 (complex), got 3");
  }
  {
    OneNode g("DFT", {{"x", 3}}, ::onnx::TensorProto::FLOAT);
    g.attr("axis", 2);
    expect_error(g.run({{"x", float_tensor({1, 4, 1}, std::vector<float>(4))}}), "DFT: axis 2 out of range");
  }
  {
    OneNode g("DFT", {{"x", 3}, {"len", 0}}, ::onnx::TensorProto::FLOAT);
    expect_error(g.run({{"x", float_tensor({1, 4, 1}, std::vector<float>(4))}, {"len", int64_scalar(0)}}),
                 "DFT: dft_length must be positive, got 0");
  }
  {
    OneNode g("STFT", {{"x", 3}, {"step", 0}, {"", 0}, {"len", 0}}, ::onnx::TensorProto::FLOAT);
    expect_error(g.run({{"x", float_tensor({1, 4, 1}, std::vector<float>(4))},
                        {"step", int64_scalar(1)},
                        {"len", int64_scalar(5)}}),
                 "STFT: frame_length 5 exceeds the signal length 4");
  }
  {
    OneNode g("STFT", {{"x", 3}, {"step", 0}, {"", 0}, {"len", 0}}, ::onnx::TensorProto::FLOAT);
    expect_error(g.run({{"x", float_tensor({1, 4, 1}, std::vector<float>(4))},
                        {"step", int64_scalar(0)},
                        {"len", int64_scalar(2)}}),
                 "STFT: frame_step must be positive, got 0");
  }
}

}  // namespace
}  // namespace loom
