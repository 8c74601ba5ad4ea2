// Calibrator: turns observed float32 activations into quantization ranges,
// with the meaning of ONNX Runtime's calibrators (MinMaxCalibrater,
// EntropyCalibrater, PercentileCalibrater, DistributionCalibrater; see
// calibration_options.h for the options).
//
// Feed it one batch per tensor per calibration run with observe(); each call
// is one ORT collect step for that tensor (ORT with one input per
// collect_data call: histograms are merged batch by batch, MinMax's moving
// average steps once per batch). Then compute() the ranges; it does not
// consume what was observed, so observing can go on afterwards.
//
// Not thread-safe: one thread at a time per Calibrator.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "loom/status.h"
#include "quantization/calibration_options.h"
#include "quantization/histogram_collector.h"
#include "quantization/min_max_collector.h"
#include "quantization/tensor_range.h"

namespace loom::quant {

class Calibrator {
 public:
  // Options are checked here and the verdict reported by every observe()
  // and compute() (see validate()).
  explicit Calibrator(CalibrationOptions options);

  // One batch of tensor `name`: `count` float32 values at `data` (read
  // during the call only; data may be null when count is 0). NaN and
  // +-Inf are skipped; a batch with no finite value (or none at all)
  // changes nothing. Errors: invalid options, count < 0, null data.
  Status observe(const std::string& name, const float* data, int64_t count);

  // The range of every tensor that had at least one finite value, by name.
  // Error (kInvalidArgument) when there is none, or the options are invalid.
  Expected<std::map<std::string, TensorRange>> compute() const;

  const CalibrationOptions& options() const { return options_; }

 private:
  struct TensorState {
    std::optional<MinMaxCollector> min_max;
    std::optional<HistogramCollector> histogram;
  };

  CalibrationOptions options_;
  Status options_status_;
  std::map<std::string, TensorState> tensors_;
};

}  // namespace loom::quant
