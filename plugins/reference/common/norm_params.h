// Parameters of the normalisation kernels (reduction_norm*.cpp): scale and
// bias tensors read as doubles, checked against the shape they apply to.
#pragma once

#include <cmath>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/broadcast.h"
#include "common/reduction_common.h"

namespace loom::reference {

// Mean of x[0..count) and 1 / sqrt(variance + eps) (population variance),
// accumulated in double: the statistics InstanceNormalization and
// GroupNormalization normalise each slice with. count > 0.
template <class T>
std::pair<double, double> mean_and_inv_std(const T* x, int64_t count, double eps) {
  double sum = 0;
  for (int64_t i = 0; i < count; ++i) sum += static_cast<double>(x[i]);
  const double mean = sum / static_cast<double>(count);
  double sq = 0;
  for (int64_t i = 0; i < count; ++i) {
    const double d = static_cast<double>(x[i]) - mean;
    sq += d * d;
  }
  return {mean, 1.0 / std::sqrt(sq / static_cast<double>(count) + eps)};
}

// `param` (shape p) broadcast unidirectionally to `target`, as doubles.
inline std::vector<double> expand_param(const sdk::ConstTensor& param, const Shape& target, std::string_view op,
                                        std::string_view what) {
  const Shape ps = param.shape();
  bool ok = ps.size() <= target.size();
  for (size_t i = 0; ok && i < ps.size(); ++i) {
    const int64_t t = target[target.size() - ps.size() + i];
    ok = ps[i] == t || ps[i] == 1;
  }
  if (!ok)
    sdk::fail_invalid(std::string(op) + ": " + std::string(what) + " of shape " + shape_string(ps) +
                      " does not broadcast to " + shape_string(target));
  const std::vector<double> v = float_tensor_to_doubles(param, op);
  std::vector<double> out(static_cast<size_t>(element_count(target)));
  for_each_broadcast(target, {ps}, [&](int64_t i, const int64_t* off) {
    out[static_cast<size_t>(i)] = v[static_cast<size_t>(off[0])];
  });
  return out;
}

// Requires a 1-D parameter with `n` elements.
inline std::vector<double> vector_param(const sdk::ConstTensor& t, int64_t n, std::string_view op,
                                        std::string_view what) {
  if (t.rank() != 1 || t.dim(0) != n)
    sdk::fail_invalid(std::string(op) + ": " + std::string(what) + " must have shape [" + std::to_string(n) +
                      "], got " + shape_string(t.shape()));
  return float_tensor_to_doubles(t, op);
}

}  // namespace loom::reference
