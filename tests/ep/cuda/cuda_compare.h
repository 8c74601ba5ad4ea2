// The CUDA EP against the reference EP: one in-memory model runs on cuda
// (fallback denied, so the EP must claim every node) and on the reference
// EP with the same random, non-zero inputs, and every output is compared
// (floats within a tolerance, integers and bools exactly). Without a GPU
// each case skips with the reason. Set LOOM_CUDA_POISON=1 (gpu_check.sh
// does) to have the EP fill fresh device memory with NaN bytes, so an
// output element a kernel never writes cannot match by accident.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/model_builder.h"
#include "common/test_env.h"
#include "loom/sdk/dtype.h"

namespace loom::cuda_testing {

constexpr auto kFloat = ::onnx::TensorProto::FLOAT;
constexpr auto kFloat16 = ::onnx::TensorProto::FLOAT16;
constexpr auto kInt64 = ::onnx::TensorProto::INT64;
constexpr auto kInt32 = ::onnx::TensorProto::INT32;
constexpr auto kBool = ::onnx::TensorProto::BOOL;

inline std::shared_ptr<Environment> environment(const std::vector<std::string>& providers, FallbackPolicy fallback,
                                                OptimizationLevel level = OptimizationLevel::kDisabled) {
  Config c;
  c.providers = providers;
  c.fallback = fallback;
  c.optimization_level = level;
  return testing::make_env(c);
}

// Shared per process: loading the plugins once keeps the suite fast.
inline std::shared_ptr<Environment> cuda_env() {
  static auto env = environment({"cuda"}, FallbackPolicy::kDeny);
  return env;
}
inline std::shared_ptr<Environment> reference_env() {
  static auto env = environment({"reference"}, FallbackPolicy::kDeny);
  return env;
}

// The reason the cuda provider has no device, empty when it has one.
inline std::string no_device_reason(const Environment& env) {
  for (const PluginReport& r : env.plugin_reports())
    for (const PluginReport::Factory& f : r.factories)
      if (f.name == "cuda") return f.devices.empty() ? f.unavailable_reason : "";
  return "the cuda plugin was not loaded";
}

#define LOOM_SKIP_WITHOUT_GPU()                                                        \
  do {                                                                                 \
    const std::string reason_ = ::loom::cuda_testing::no_device_reason(                \
        *::loom::cuda_testing::cuda_env());                                            \
    if (!reason_.empty()) GTEST_SKIP() << "no GPU here: " << reason_;                  \
  } while (0)

// Deterministic values in [lo, hi), never exactly zero.
inline std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.f, float hi = 1.f) {
  std::vector<float> v(n);
  uint32_t s = seed * 2654435761u + 12345u;
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    x = lo + (hi - lo) * static_cast<float>(s >> 8) / static_cast<float>(1u << 24);
    if (x == 0.f) x = (hi - lo) * 1e-3f;
  }
  return v;
}

inline int64_t count_of(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// IEEE half conversions (round to nearest even) for float16 tensors: the
// SDK's, the same the EP's host code uses.
inline uint16_t to_half(float f) { return sdk::Float16(f).bits; }
inline float from_half(uint16_t h) { return sdk::Float16::to_float(h); }

// A random tensor of `dtype` (floats in [lo, hi), integers in [lo, hi]
// rounded, bools alternating pseudo-randomly).
inline Tensor random_tensor(DType dtype, const std::vector<int64_t>& dims, uint32_t seed, float lo = -1.f,
                            float hi = 1.f) {
  const size_t n = static_cast<size_t>(count_of(dims));
  const std::vector<float> f = random_floats(n, seed, lo, hi);
  switch (dtype) {
    case DType::kFloat: return Tensor::from_vector(dtype, dims, f);
    case DType::kDouble: return Tensor::from_vector(dtype, dims, std::vector<double>(f.begin(), f.end()));
    case DType::kFloat16: {
      std::vector<uint16_t> h(n);
      for (size_t i = 0; i < n; ++i) h[i] = to_half(f[i]);
      return Tensor::from_vector(dtype, dims, h);
    }
    case DType::kInt64: {
      std::vector<int64_t> v(n);
      for (size_t i = 0; i < n; ++i) v[i] = static_cast<int64_t>(std::lround(f[i]));
      return Tensor::from_vector(dtype, dims, v);
    }
    case DType::kInt32: {
      std::vector<int32_t> v(n);
      for (size_t i = 0; i < n; ++i) v[i] = static_cast<int32_t>(std::lround(f[i]));
      return Tensor::from_vector(dtype, dims, v);
    }
    case DType::kInt8: {
      std::vector<int8_t> v(n);
      for (size_t i = 0; i < n; ++i) v[i] = static_cast<int8_t>(std::lround(f[i]));
      return Tensor::from_vector(dtype, dims, v);
    }
    case DType::kUint8: {
      std::vector<uint8_t> v(n);
      for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(std::lround(std::fabs(f[i])));
      return Tensor::from_vector(dtype, dims, v);
    }
    case DType::kBool: {
      std::vector<uint8_t> v(n);
      for (size_t i = 0; i < n; ++i) v[i] = f[i] > (lo + hi) / 2 ? 1 : 0;
      return Tensor::from_vector(dtype, dims, v);
    }
    default: ADD_FAILURE() << "random_tensor: unsupported type " << dtype_name(dtype); return Tensor();
  }
}

struct Tolerance {
  double rtol = 1e-5;
  double atol = 1e-6;
};
// float16 results: about 3 decimal digits.
constexpr Tolerance kHalfTolerance{5e-3, 5e-3};

// Element i of a numeric tensor as double (float16 decoded).
inline double element(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kFloat: return t.data_as<float>()[i];
    case DType::kDouble: return t.data_as<double>()[i];
    case DType::kFloat16: return from_half(t.data_as<uint16_t>()[i]);
    case DType::kInt64: return static_cast<double>(t.data_as<int64_t>()[i]);
    case DType::kInt32: return t.data_as<int32_t>()[i];
    case DType::kInt8: return t.data_as<int8_t>()[i];
    case DType::kUint8: return t.data_as<uint8_t>()[i];
    case DType::kBool: return t.data_as<uint8_t>()[i] ? 1 : 0;
    case DType::kUint16: return t.data_as<uint16_t>()[i];
    case DType::kUint32: return t.data_as<uint32_t>()[i];
    case DType::kUint64: return static_cast<double>(t.data_as<uint64_t>()[i]);
    default: return std::nan("");
  }
}

inline bool is_float(DType t) { return t == DType::kFloat || t == DType::kDouble || t == DType::kFloat16; }

// Floats within atol + rtol * |expected| (NaN matches NaN), others exactly.
// The element types may differ: a float16 result against a float reference.
inline void expect_values_close(const Tensor& expected, const Tensor& actual, Tolerance tol, const std::string& what) {
  ASSERT_EQ(expected.dims(), actual.dims()) << what;
  int reported = 0;
  for (int64_t i = 0; i < expected.element_count(); ++i) {
    const double e = element(expected, i), a = element(actual, i);
    if (std::isnan(e) && std::isnan(a)) continue;
    const bool ok = is_float(expected.dtype()) ? std::fabs(a - e) <= tol.atol + tol.rtol * std::fabs(e) : a == e;
    if (ok) continue;
    ADD_FAILURE() << what << ": element " << i << " is " << a << ", reference " << e;
    if (++reported == 5) return;
  }
}

// The same, and the element types equal.
inline void expect_close(const Tensor& expected, const Tensor& actual, Tolerance tol, const std::string& what) {
  ASSERT_EQ(expected.dtype(), actual.dtype()) << what;
  expect_values_close(expected, actual, tol, what);
}

inline std::unique_ptr<Session> make_session(const std::shared_ptr<Environment>& env, const std::string& model) {
  auto s = Session::create_from_bytes(env, model);
  EXPECT_TRUE(s.has_value()) << s.status().message();
  return s.has_value() ? std::move(*s) : nullptr;
}

// The whole check: every node on cuda, outputs equal to the reference's.
// Runs twice, so a kernel that depends on what a previous run left in
// device memory is caught too.
// `gpu_env` and `ref_env` choose the environments (provider options).
inline void expect_matches_reference_in(const std::shared_ptr<Environment>& gpu_env,
                                        const std::shared_ptr<Environment>& ref_env, const std::string& model,
                                        const std::map<std::string, Tensor>& inputs, Tolerance tol = {},
                                        const std::string& what = "") {
  auto gpu = make_session(gpu_env, model);
  auto reference = make_session(ref_env, model);
  ASSERT_TRUE(gpu && reference) << what;
  for (const auto& n : gpu->placement().nodes) EXPECT_EQ(n.provider, "cuda") << what << ": " << n.node_name;
  auto want = reference->run(inputs);
  ASSERT_TRUE(want.has_value()) << what << ": reference: " << want.status().message();
  for (int run = 0; run < 2; ++run) {
    auto got = gpu->run(inputs);
    ASSERT_TRUE(got.has_value()) << what << ": cuda: " << got.status().message();
    ASSERT_EQ(got->size(), want->size());
    for (size_t i = 0; i < got->size(); ++i)
      expect_close((*want)[i], (*got)[i], tol, what + " output " + std::to_string(i) + " run " + std::to_string(run));
  }
}

inline void expect_matches_reference(const std::string& model, const std::map<std::string, Tensor>& inputs,
                                     Tolerance tol = {}, const std::string& what = "") {
  expect_matches_reference_in(cuda_env(), reference_env(), model, inputs, tol, what);
}

// float16 inputs decoded to float32 (other inputs as they are): the float
// twin's inputs.
inline std::map<std::string, Tensor> widened(const std::map<std::string, Tensor>& inputs) {
  std::map<std::string, Tensor> out;
  for (const auto& [name, t] : inputs) {
    if (t.dtype() != DType::kFloat16) {
      out.emplace(name, t);
      continue;
    }
    std::vector<float> v(static_cast<size_t>(t.element_count()));
    for (size_t i = 0; i < v.size(); ++i) v[i] = from_half(t.data_as<uint16_t>()[i]);
    out.emplace(name, Tensor::from_vector(DType::kFloat, t.dims(), v));
  }
  return out;
}

// For ops the reference EP runs in float only (com.microsoft contrib ops):
// `half_model` (float16) on cuda against `float_model`, the same graph in
// float, on the reference, fed the same values; outputs within `tol`
// (floats, whatever their width) or equal (integers).
inline void expect_half_matches_float_reference(const std::string& half_model,
                                                const std::map<std::string, Tensor>& half_in,
                                                const std::string& float_model,
                                                const std::map<std::string, Tensor>& float_in, Tolerance tol,
                                                const std::string& what) {
  auto gpu = make_session(cuda_env(), half_model);
  auto reference = make_session(reference_env(), float_model);
  ASSERT_TRUE(gpu && reference) << what;
  for (const auto& n : gpu->placement().nodes) EXPECT_EQ(n.provider, "cuda") << what << ": " << n.node_name;
  auto want = reference->run(float_in);
  ASSERT_TRUE(want.has_value()) << what << ": reference: " << want.status().message();
  auto got = gpu->run(half_in);
  ASSERT_TRUE(got.has_value()) << what << ": cuda: " << got.status().message();
  ASSERT_EQ(got->size(), want->size()) << what;
  for (size_t o = 0; o < got->size(); ++o)
    expect_values_close((*want)[o], (*got)[o], tol, what + " output " + std::to_string(o));
}

// The same with the float inputs derived from the float16 ones.
inline void expect_half_matches_float_reference(const std::string& half_model, const std::string& float_model,
                                                const std::map<std::string, Tensor>& half_in, Tolerance tol,
                                                const std::string& what) {
  expect_half_matches_float_reference(half_model, half_in, float_model, widened(half_in), tol, what);
}

}  // namespace loom::cuda_testing
