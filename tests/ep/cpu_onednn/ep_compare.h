// Runs one in-memory model on cpu_onednn (fallback denied, so the EP must
// claim every node) and on the reference EP, and compares the outputs.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/model_builder.h"
#include "common/test_env.h"
#include "profiled_parts.h"

namespace loom::ep_testing {

constexpr auto kFloat = ::onnx::TensorProto::FLOAT;

inline std::shared_ptr<Environment> environment(const std::vector<std::string>& providers, FallbackPolicy fallback,
                                                int intra_op_threads = 0) {
  Config c;
  c.providers = providers;
  c.fallback = fallback;
  c.intra_op_threads = intra_op_threads;
  return testing::make_env(c);
}

// Shared per process: loading plugins once keeps the suite fast.
inline std::shared_ptr<Environment> onednn_env() {
  static auto env = environment({"cpu_onednn"}, FallbackPolicy::kDeny, 2);
  return env;
}
inline std::shared_ptr<Environment> reference_env() {
  static auto env = environment({"reference"}, FallbackPolicy::kDeny);
  return env;
}

// Deterministic values in [lo, hi).
inline std::vector<float> random_values(size_t n, uint32_t seed, float lo = -1.f, float hi = 1.f) {
  std::vector<float> v(n);
  uint32_t s = seed * 2654435761u + 12345u;
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    x = lo + (hi - lo) * static_cast<float>(s >> 8) / static_cast<float>(1u << 24);
  }
  return v;
}
inline int64_t count(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}
inline Tensor random_tensor(const std::vector<int64_t>& dims, uint32_t seed, float lo = -1.f, float hi = 1.f) {
  return testing::float_tensor(dims, random_values(static_cast<size_t>(count(dims)), seed, lo, hi));
}
// A random initializer scaled so sums over `fan_in` terms stay O(1).
inline void random_weights(testing::ModelBuilder& m, const std::string& name, const std::vector<int64_t>& dims,
                           uint32_t seed, int64_t fan_in = 1) {
  const float scale = 1.f / std::sqrt(static_cast<float>(std::max<int64_t>(fan_in, 1)));
  m.float_initializer(name, dims, random_values(static_cast<size_t>(count(dims)), seed, -scale, scale));
}

using testing::add_float_attr;
using testing::add_ints_attr;
using testing::add_string_attr;

// A depthwise 3x3 Conv of `channels` channels, pads 1 (same dims), random
// weights `weights` (from `seed`), no bias, `input` -> `output`. On
// cpu_onednn it is the depthwise step, whose result is channels-last: tests
// put one first to give the node after it an NHWC input.
inline void depthwise_3x3(testing::ModelBuilder& m, const std::string& input, const std::string& output,
                          int64_t channels, const std::string& weights, uint32_t seed) {
  random_weights(m, weights, {channels, 1, 3, 3}, seed, 9);
  auto& dw = m.node("Conv", {input, weights}, {output});
  testing::add_int_attr(dw, "group", channels);
  add_ints_attr(dw, "pads", {1, 1, 1, 1});
}
inline void int64_initializer(testing::ModelBuilder& m, const std::string& name, const std::vector<int64_t>& values) {
  auto* t = m.proto().mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(::onnx::TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) t->add_int64_data(v);
}

struct Tolerance {
  double rtol = 1e-4;
  double atol = 1e-5;
};

inline void expect_close(const Tensor& expected, const Tensor& actual, Tolerance tol, const std::string& what) {
  ASSERT_EQ(expected.dims(), actual.dims()) << what;
  ASSERT_EQ(expected.dtype(), actual.dtype()) << what;
  const float* e = expected.data_as<float>();
  const float* a = actual.data_as<float>();
  int reported = 0;
  for (int64_t i = 0; i < expected.element_count(); ++i) {
    if (std::isnan(e[i]) && std::isnan(a[i])) continue;
    if (std::fabs(a[i] - e[i]) <= tol.atol + tol.rtol * std::fabs(e[i])) continue;
    ADD_FAILURE() << what << ": element " << i << " is " << a[i] << ", reference " << e[i];
    if (++reported == 5) return;
  }
}

inline std::unique_ptr<Session> make_session(const std::shared_ptr<Environment>& env, const std::string& model,
                                             const SessionOptions& options = {}) {
  auto s = Session::create_from_bytes(env, model, options);
  EXPECT_TRUE(s.has_value()) << s.status().message();
  return s.has_value() ? std::move(*s) : nullptr;
}

// The whole check: every node on cpu_onednn, outputs equal to the reference's.
// `onednn` is the environment the EP runs in (another thread count, say).
// `parts` (optional) receives what cpu_onednn said it ran (profiled_parts.h).
inline void expect_matches_reference(const std::string& model, const std::map<std::string, Tensor>& inputs,
                                     Tolerance tol = {}, const std::string& what = "",
                                     const std::shared_ptr<Environment>& onednn_environment = onednn_env(),
                                     ProfiledParts* parts = nullptr) {
  auto onednn = make_session(onednn_environment, model, parts != nullptr ? profiled_options() : SessionOptions{});
  auto reference = make_session(reference_env(), model);
  ASSERT_TRUE(onednn && reference) << what;
  for (const auto& n : onednn->placement().nodes) EXPECT_EQ(n.provider, "cpu_onednn") << what << ": " << n.node_name;
  auto got = onednn->run(inputs);
  auto want = reference->run(inputs);
  ASSERT_TRUE(want.has_value()) << what << ": reference: " << want.status().message();
  ASSERT_TRUE(got.has_value()) << what << ": cpu_onednn: " << got.status().message();
  ASSERT_EQ(got->size(), want->size());
  for (size_t i = 0; i < got->size(); ++i)
    expect_close((*want)[i], (*got)[i], tol, what + " output " + std::to_string(i));
  if (parts != nullptr) *parts = parts_of(*onednn);
}

}  // namespace loom::ep_testing
