// What the quantized-op tests of cpu_onednn share: integer inputs, and the
// comparison of cpu_onednn's outputs with the reference EP's.
//
// Tolerance for integer outputs: at most 1 step. Both EPs compute the same
// int32 accumulators and the same float requantization scale, and both
// round half to even, but oneDNN may form the float product in another
// order (bias and zero points folded in differently, or, for
// QuantizeLinear, x * (1 / scale) where ONNX divides): a value within an
// ulp of a .5 tie may then round the other way. Nearly all elements must
// match exactly (checked: at most 1% differ).
#pragma once

#include <cstdint>
#include <optional>
#include <set>

#include "ep_compare.h"

namespace loom::ep_testing {

inline constexpr auto kU8 = ::onnx::TensorProto::UINT8;
inline constexpr auto kS8 = ::onnx::TensorProto::INT8;
inline constexpr auto kS32 = ::onnx::TensorProto::INT32;

inline void scalar_float(testing::ModelBuilder& m, const std::string& name, float v) { m.float_initializer(name, {}, {v}); }

// Deterministic integers in [lo, hi].
inline std::vector<int32_t> random_ints(size_t n, uint32_t seed, int32_t lo, int32_t hi) {
  std::vector<int32_t> out;
  for (float v : random_values(n, seed, 0.f, 1.f))
    out.push_back(std::min(hi, lo + static_cast<int32_t>(v * static_cast<float>(hi - lo + 1))));
  return out;
}

inline Tensor int8_tensor(const std::vector<int64_t>& dims, bool is_signed, uint32_t seed) {
  const size_t n = static_cast<size_t>(count(dims));
  if (is_signed) {
    std::vector<int8_t> v;
    for (int32_t x : random_ints(n, seed, -128, 127)) v.push_back(static_cast<int8_t>(x));
    return Tensor::from_vector(DType::kInt8, dims, v);
  }
  std::vector<uint8_t> v;
  for (int32_t x : random_ints(n, seed, 0, 255)) v.push_back(static_cast<uint8_t>(x));
  return Tensor::from_vector(DType::kUint8, dims, v);
}

// Integer outputs: equal dims and type, every element within 1 of the
// reference, at most `max_off_percent` % of them off by one (see the file
// comment).
inline void expect_within_one(const Tensor& want, const Tensor& got, const std::string& what, int max_off_percent = 1) {
  ASSERT_EQ(want.dims(), got.dims()) << what;
  ASSERT_EQ(want.dtype(), got.dtype()) << what;
  auto at = [](const Tensor& t, int64_t i) -> int32_t {
    return t.dtype() == DType::kInt8 ? t.data_as<int8_t>()[i] : t.data_as<uint8_t>()[i];
  };
  int64_t off_by_one = 0, reported = 0;
  for (int64_t i = 0; i < want.element_count(); ++i) {
    const int32_t e = at(want, i), a = at(got, i);
    if (e == a) continue;
    if (std::abs(e - a) == 1) {
      ++off_by_one;
      continue;
    }
    if (reported++ < 5) ADD_FAILURE() << what << ": element " << i << " is " << a << ", reference " << e;
  }
  EXPECT_LE(off_by_one * 100, want.element_count() * max_off_percent) << what << ": " << off_by_one << " elements off by one";
}

// Every output of `got` (cpu_onednn) against `want` (reference): float ones
// close, integer ones within one step with at most off_percent(i) % of the
// elements off by one.
template <class Outputs, class OffPercent>
inline void expect_outputs_match(const Outputs& want, const Outputs& got, const std::string& what, OffPercent off_percent) {
  ASSERT_TRUE(want.has_value()) << what << ": reference: " << want.status().message();
  ASSERT_TRUE(got.has_value()) << what << ": cpu_onednn: " << got.status().message();
  ASSERT_EQ(got->size(), want->size());
  for (size_t i = 0; i < got->size(); ++i) {
    const std::string out = what + " output " + std::to_string(i);
    if ((*want)[i].dtype() == DType::kFloat)
      expect_close((*want)[i], (*got)[i], {}, out);
    else
      expect_within_one((*want)[i], (*got)[i], out, off_percent(i));
  }
}

// Runs `model` on cpu_onednn alone (fallback denied: every node must be
// claimed, checked again here by name) and on the reference EP.
inline void expect_quantized_match(const std::string& model, const std::map<std::string, Tensor>& inputs,
                            const std::string& what, int max_off_percent = 1) {
  auto onednn = make_session(onednn_env(), model);
  auto reference = make_session(reference_env(), model);
  ASSERT_TRUE(onednn && reference) << what;
  for (const auto& n : onednn->placement().nodes) EXPECT_EQ(n.provider, "cpu_onednn") << what << ": " << n.op_type;
  expect_outputs_match(reference->run(inputs), onednn->run(inputs), what,
                       [max_off_percent](size_t) { return max_off_percent; });
}

}  // namespace loom::ep_testing
