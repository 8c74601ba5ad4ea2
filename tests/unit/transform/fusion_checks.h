// Checks for graph-pass tests: build a session at an optimization level on
// the reference EP, count the ops it runs, and compare its outputs with the
// same model at level disabled (lowerings only) on the same inputs.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/test_env.h"

namespace loom::testing {

inline std::vector<float> wave(size_t n, float scale = 1.f, float phase = 0.f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * std::sin(0.7f * static_cast<float>(i) + phase);
  return v;
}

inline std::unique_ptr<Session> session(const std::string& model, OptimizationLevel level) {
  Config c;
  c.providers = {"reference"};
  c.optimization_level = level;
  auto s = Session::create_from_bytes(make_env(c), model);
  EXPECT_TRUE(s.has_value()) << s.status().message();
  return s ? std::move(*s) : nullptr;
}

// Op counts ("domain.op" outside the ONNX domain) of the nodes the session runs.
inline std::map<std::string, int> op_counts(const Session& s) {
  std::map<std::string, int> counts;
  for (const auto& n : s.placement().nodes) ++counts[(n.domain.empty() ? "" : n.domain + ".") + n.op_type];
  return counts;
}

// The elements of a numeric tensor as doubles (ADD_FAILURE for other types).
inline std::vector<double> as_doubles(const Tensor& t) {
  std::vector<double> out(static_cast<size_t>(t.element_count()));
  auto copy = [&](auto* p) {
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<double>(p[i]);
  };
  switch (t.dtype()) {
    case DType::kFloat: copy(t.data_as<float>()); break;
    case DType::kDouble: copy(t.data_as<double>()); break;
    case DType::kInt8: copy(t.data_as<int8_t>()); break;
    case DType::kUint8: copy(t.data_as<uint8_t>()); break;
    case DType::kInt16: copy(t.data_as<int16_t>()); break;
    case DType::kUint16: copy(t.data_as<uint16_t>()); break;
    case DType::kInt32: copy(t.data_as<int32_t>()); break;
    case DType::kUint32: copy(t.data_as<uint32_t>()); break;
    case DType::kInt64: copy(t.data_as<int64_t>()); break;
    case DType::kUint64: copy(t.data_as<uint64_t>()); break;
    case DType::kBool: copy(t.data_as<bool>()); break;
    default: ADD_FAILURE() << "as_doubles: unsupported type " << dtype_name(t.dtype());
  }
  return out;
}

// Every output of `opt` and `plain` on `inputs` agrees (types, dims, values
// within `tol` relative + absolute; tol 0 = bitwise-equal values).
inline void expect_same_outputs(Session& plain, Session& opt, const std::map<std::string, Tensor>& inputs,
                                const std::string& what, double tol) {
  auto want = plain.run(inputs);
  auto got = opt.run(inputs);
  ASSERT_TRUE(want.has_value()) << what << ": " << want.status().message();
  ASSERT_TRUE(got.has_value()) << what << ": " << got.status().message();
  ASSERT_EQ(want->size(), got->size()) << what;
  for (size_t o = 0; o < want->size(); ++o) {
    ASSERT_EQ((*want)[o].dtype(), (*got)[o].dtype()) << what << " output " << o;
    ASSERT_EQ((*want)[o].dims(), (*got)[o].dims()) << what << " output " << o;
    const auto a = as_doubles((*want)[o]), b = as_doubles((*got)[o]);
    for (size_t i = 0; i < a.size(); ++i) {
      if (tol == 0) EXPECT_EQ(a[i], b[i]) << what << " output " << o << " at " << i;
      else EXPECT_NEAR(a[i], b[i], tol + tol * std::fabs(a[i])) << what << " output " << o << " at " << i;
    }
  }
}

// At `level` the model runs exactly the ops `fused` and computes what it
// computes at level disabled.
inline void expect_fuses(const std::string& model, const std::map<std::string, Tensor>& inputs,
                         const std::map<std::string, int>& fused, const std::string& what,
                         OptimizationLevel level = OptimizationLevel::kExtended, double tol = 1e-5) {
  auto plain = session(model, OptimizationLevel::kDisabled);
  auto opt = session(model, level);
  ASSERT_TRUE(plain && opt) << what;
  EXPECT_EQ(op_counts(*opt), fused) << what;
  expect_same_outputs(*plain, *opt, inputs, what, tol);
}

// At `level` the model still runs `op` and computes exactly what it computes
// at level disabled.
inline void expect_no_fusion(const std::string& model, const std::map<std::string, Tensor>& inputs,
                             const std::string& op, const std::string& what,
                             OptimizationLevel level = OptimizationLevel::kExtended) {
  auto plain = session(model, OptimizationLevel::kDisabled);
  auto opt = session(model, level);
  ASSERT_TRUE(plain && opt) << what;
  EXPECT_GT(op_counts(*opt)[op], 0) << what << ": expected no fusion";
  expect_same_outputs(*plain, *opt, inputs, what, 0);
}

// The pass is in loom::graph_passes() (what `loom optimize --list-passes`
// prints) at `level`.
inline void expect_listed_pass(const std::string& name, OptimizationLevel level) {
  bool found = false;
  for (const auto& p : graph_passes())
    if (p.name == name) {
      found = true;
      EXPECT_EQ(p.level, level) << name;
    }
  EXPECT_TRUE(found) << name << " is not among loom::graph_passes()";
}

}  // namespace loom::testing
