// The fixed calibration batches shared by the quantization tests; the same
// formula as batch_value() in reference_calibration.py, which computed the
// expected numbers. Integer arithmetic and one IEEE division per term keep
// C++ and numpy bit-identical.
#pragma once

#include <cstdint>
#include <vector>

namespace loom::quant::testing {

inline double batch_value(int batch, int64_t i) {
  const double u = static_cast<double>((i * 7919 + batch * 131) % 1000) / 1000.0;
  const double v = static_cast<double>((i * 104729 + batch * 17) % 997) / 997.0;
  if (batch == 0) return 2.0 * (u + v - 1.0) + 0.25;
  if (batch == 1) return i == 700 ? 7.5 : 1.5 * (u + v - 1.0) - 0.5;
  return 0.8 * (u + v - 1.0);
}

constexpr int kNumBatches = 3;
constexpr int64_t kBatchSizes[kNumBatches] = {2000, 1500, 1000};

// Batch b of tensor "act", or of "relu" (max(act, 0)).
inline std::vector<float> batch(int b, bool relu = false) {
  std::vector<float> out(static_cast<size_t>(kBatchSizes[b]));
  for (int64_t i = 0; i < kBatchSizes[b]; ++i) {
    float v = static_cast<float>(batch_value(b, i));
    out[static_cast<size_t>(i)] = relu && v < 0.0f ? 0.0f : v;
  }
  return out;
}

}  // namespace loom::quant::testing
