#include "quantization/calibration_options.h"

#include <cmath>

namespace loom::quant {

Expected<CalibrationMethod> calibration_method_from_name(const std::string& name) {
  if (name == "minmax") return CalibrationMethod::kMinMax;
  if (name == "entropy") return CalibrationMethod::kEntropy;
  if (name == "percentile") return CalibrationMethod::kPercentile;
  if (name == "distribution") return CalibrationMethod::kDistribution;
  return invalid_argument("unknown calibration method '" + name +
                          "' (expected minmax, entropy, percentile or distribution)");
}

const char* calibration_method_name(CalibrationMethod method) {
  switch (method) {
    case CalibrationMethod::kMinMax: return "minmax";
    case CalibrationMethod::kEntropy: return "entropy";
    case CalibrationMethod::kPercentile: return "percentile";
    case CalibrationMethod::kDistribution: return "distribution";
  }
  return "unknown";
}

int default_num_bins(CalibrationMethod method) {
  switch (method) {
    case CalibrationMethod::kMinMax: return 0;
    case CalibrationMethod::kEntropy: return 128;
    case CalibrationMethod::kPercentile:
    case CalibrationMethod::kDistribution: return 2048;
  }
  return 0;
}

bool ort_default_symmetric(CalibrationMethod method) { return method == CalibrationMethod::kPercentile; }

int effective_num_bins(const CalibrationOptions& options) {
  return options.num_bins > 0 ? options.num_bins : default_num_bins(options.method);
}

Status validate(const CalibrationOptions& o) {
  if (o.num_bins < 0) return invalid_argument("num_bins must not be negative, got " + std::to_string(o.num_bins));
  // A histogram grows past num_bins when later batches widen the range, up
  // to HistogramCollector::kMaxBins; starting there leaves no room.
  constexpr int kMaxBins = 1 << 20;
  if (o.num_bins > kMaxBins) return invalid_argument("num_bins is too large: " + std::to_string(o.num_bins));
  switch (o.method) {
    case CalibrationMethod::kMinMax:
      // ORT checks the constant only when the moving average is on.
      if (o.moving_average && !(o.averaging_constant >= 0.0f && o.averaging_constant <= 1.0f))
        return invalid_argument("averaging_constant must lie in [0, 1], got " +
                                std::to_string(o.averaging_constant));
      break;
    case CalibrationMethod::kEntropy:
      if (o.num_quantized_bins < 1)
        return invalid_argument("num_quantized_bins must be positive, got " + std::to_string(o.num_quantized_bins));
      // ORT's KL search needs at least one candidate (num_bins/2 >=
      // num_quantized_bins/2); it fails on an empty argmin otherwise.
      if (effective_num_bins(o) / 2 < o.num_quantized_bins / 2)
        return invalid_argument("num_quantized_bins (" + std::to_string(o.num_quantized_bins) +
                                ") must not exceed num_bins (" + std::to_string(effective_num_bins(o)) + ")");
      break;
    case CalibrationMethod::kPercentile:
      if (!(o.percentile >= 0.0 && o.percentile <= 100.0))
        return invalid_argument("percentile must lie in [0, 100], got " + std::to_string(o.percentile));
      break;
    case CalibrationMethod::kDistribution:
      if (effective_num_bins(o) < 512)
        return invalid_argument("the distribution method needs num_bins >= 512, got " +
                                std::to_string(effective_num_bins(o)));
      break;
  }
  return Status::ok();
}

}  // namespace loom::quant
