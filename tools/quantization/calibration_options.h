// What a calibration computes: the method and its knobs, with the meaning of
// ONNX Runtime's Python calibrators (onnxruntime/python/tools/quantization/
// calibrate.py, create_calibrator and its extra_options).
#pragma once

#include <string>

#include "loom/status.h"

namespace loom::quant {

enum class CalibrationMethod { kMinMax, kEntropy, kPercentile, kDistribution };

// "minmax" | "entropy" | "percentile" | "distribution" (exact, lower case);
// anything else is kInvalidArgument naming the accepted names.
Expected<CalibrationMethod> calibration_method_from_name(const std::string& name);
// The inverse: the lower-case name accepted above.
const char* calibration_method_name(CalibrationMethod method);

struct CalibrationOptions {
  CalibrationMethod method = CalibrationMethod::kMinMax;
  // MinMax only: an exponential moving average of the per-batch min and max
  // (the first batch initialises it) instead of the global min and max.
  // averaging_constant must lie in [0, 1].
  bool moving_average = false;
  float averaging_constant = 0.01f;
  // MinMax: each batch's range becomes [-m, m], m = max(|min|, |max|).
  // Percentile: the histogram is of |x| and the range is [-t, t] (then
  // clamped to the observed min/max, as ORT does). Entropy and Distribution
  // ignore it, as ORT does. Note: ORT's create_calibrator defaults it to
  // true for Percentile (false elsewhere); here it is false unless set, see
  // ort_default_symmetric().
  bool symmetric = false;
  // Percentile: the percentage of values kept, in [0, 100]; double so that
  // 99.999 compares exactly as ORT's Python float does.
  double percentile = 99.999;
  // Histogram bins of the first batch; 0 picks the method's ORT default
  // (see default_num_bins). Distribution needs at least 512.
  int num_bins = 0;
  // Entropy: the quantized bins the KL search compares against; at most
  // num_bins.
  int num_quantized_bins = 128;
};

// ORT's create_calibrator defaults: 128 bins for Entropy, 2048 for
// Percentile and Distribution, 0 for MinMax (no histogram).
int default_num_bins(CalibrationMethod method);
// ORT's create_calibrator default of `symmetric`: true for Percentile only.
bool ort_default_symmetric(CalibrationMethod method);
// num_bins with 0 replaced by the method's default.
int effective_num_bins(const CalibrationOptions& options);
// kInvalidArgument naming the first option out of range, else OK.
Status validate(const CalibrationOptions& options);

}  // namespace loom::quant
